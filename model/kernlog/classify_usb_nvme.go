package kernlog

import "strings"

// classifyUSB reads "usb 2-1: …" and "usb 2-1.4: …" (after "usb "): a USB
// device by its port path. Root hubs ("usb usb2") and hub ports
// ("usb usb2-port1") are not disks and are not matched.
func classifyUSB(s string) (Finding, bool) {
	port, body, ok := strings.Cut(s, ": ")
	if !ok || !isUSBPort(port) {
		return Finding{}, false
	}
	var kind Kind
	switch {
	case strings.HasPrefix(body, "reset ") && strings.Contains(body, " USB device number "):
		kind = KindLinkReset
	case strings.HasPrefix(body, "USB disconnect"):
		kind = KindGone
	case strings.HasPrefix(body, "device descriptor read"),
		strings.HasPrefix(body, "device not accepting address"):
		// The enclosure dropped off and does not come back cleanly: the
		// bridge, the cable or its power.
		kind = KindLinkError
	default:
		return Finding{}, false
	}
	return Finding{Kind: kind, Ref: Ref{Kind: "usb", Name: port}, Sector: -1}, true
}

// isUSBPort: "B-P" or "B-P.P.P", numbers only.
func isUSBPort(s string) bool {
	bus, path, ok := strings.Cut(s, "-")
	if !ok || !allDigits(bus) || path == "" {
		return false
	}
	for path != "" {
		var part string
		part, path, _ = strings.Cut(path, ".")
		if !allDigits(part) {
			return false
		}
	}
	return !strings.HasSuffix(s, ".")
}

// classifyNVMeController reads "nvme nvme0: …".
func classifyNVMeController(msg string) (Finding, bool) {
	const prefix = "nvme nvme"
	s := msg[len(prefix):]
	i := 0
	for i < len(s) && isDigitByte(s[i]) {
		i++
	}
	if i == 0 {
		return Finding{}, false
	}
	body, ok := strings.CutPrefix(s[i:], ": ")
	if !ok {
		return Finding{}, false
	}
	var kind Kind
	switch {
	case strings.HasPrefix(body, "I/O ") && strings.Contains(body, " timeout, "):
		// "I/O 123 QID 4 timeout, aborting", "…, reset controller",
		// 6.x's "I/O tag 123 (0123) opcode 0x2 (Read) QID 4 timeout, aborting …".
		kind = KindTimeout
	case strings.HasPrefix(body, "controller is down; will reset"),
		strings.HasPrefix(body, "Device not ready; aborting reset"):
		kind = KindLinkDown
	case strings.HasPrefix(body, "Removing after probe failure"),
		strings.HasPrefix(body, "Disabling device after reset failure"):
		kind = KindGone
	case strings.HasPrefix(body, "frozen state error detected, reset controller"):
		kind = KindLinkReset
	default:
		return Finding{}, false
	}
	f := Finding{Kind: kind, Ref: Ref{Kind: "nvme", Name: msg[len("nvme ") : len(prefix)+i]}, Sector: -1}
	if kind == KindTimeout {
		f.Op = nvmeTimeoutOp(body)
	}
	return f, true
}

// nvmeTimeoutOp reads 6.x's "req_op:WRITE(1)"; older timeouts do not say.
func nvmeTimeoutOp(body string) string {
	_, op, ok := strings.Cut(body, "req_op:")
	if !ok {
		return ""
	}
	op, _, _ = strings.Cut(op, "(")
	op, _, _ = strings.Cut(op, " ")
	return op
}

// classifyNVMeNamespace reads the per-command error report of 5.18+:
// "nvme0n1: Read(0x2) @ LBA 2048, 8 blocks, Unrecovered Read Error (sct 0x2
// / sc 0x81) DNR". Status code type 2 is a media or data integrity error.
// Sector is the LBA as printed (in the namespace's blocks).
func classifyNVMeNamespace(msg string) (Finding, bool) {
	name, body, ok := strings.Cut(msg, ": ")
	if !ok || !isNVMeNamespace(name) {
		return Finding{}, false
	}
	at := strings.Index(body, ") @ LBA ")
	if at < 0 {
		return Finding{}, false
	}
	f := Finding{Kind: KindIOError, Ref: Ref{Kind: "block", Name: wholeDisk(name)}, Sector: -1}
	if n, _, ok := leadingNumber(body[at+len(") @ LBA "):]); ok {
		f.Sector = n
	}
	if strings.Contains(body, "(sct 0x2 /") {
		f.Kind = KindMediumError
	}
	if op, code, ok := strings.Cut(body[:at], "("); ok {
		f.Op = nvmeOp(op, code)
	}
	return f, true
}

// isNVMeNamespace: "nvme0n1" (or a partition of one).
func isNVMeNamespace(s string) bool {
	rest, ok := strings.CutPrefix(s, "nvme")
	if !ok {
		return false
	}
	ctrl, ns, ok := strings.Cut(rest, "n")
	if !ok || !allDigits(ctrl) {
		return false
	}
	ns, _, _ = strings.Cut(ns, "p")
	return allDigits(ns)
}

// nvmeOp names the command: "Read(0x2)", or "I/O Cmd(0x2)" on kernels
// that printed no name for it (NVM opcodes 0x0 flush, 0x1 write, 0x2 read).
func nvmeOp(name, code string) string {
	switch {
	case name == "Read" || code == "0x2":
		return "READ"
	case name == "Write" || code == "0x1":
		return "WRITE"
	case name == "Flush" || code == "0x0":
		return "FLUSH"
	}
	return name
}
