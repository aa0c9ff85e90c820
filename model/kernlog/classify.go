package kernlog

import "strings"

// Classify says what a kernel message reports about a disk or the port it
// sits on; ok false for anything else (most lines). It runs on every kernel
// record, so a message is first told apart by its first bytes and plain
// prefix checks: it allocates nothing and uses no regular expression.
//
// One failing I/O is often reported twice (the libata or SCSI line, then
// the block layer's): each line is one finding, and callers count bursts,
// not lines. A SCSI command's several lines give one finding, on its
// "Sense Key" line.
//
// What it recognises (each family tested on real lines, testdata/kernel-log):
//   - block layer, all wordings since 2.6 ("end_request:", "blk_update_request:",
//     "print_req_error:", none since 5.x): "<name> error, dev sdb, sector N
//     [op 0x0:(READ) …]" for I/O, critical medium, critical target, timeout,
//     recoverable transport, critical nexus and protection errors; "Buffer I/O
//     error on dev(ice) sdb1, logical block N[, lost async page write]";
//   - libata: hard/soft resets, COMRESET and softreset failures, "SError: { … }"
//     with a CRC-like interface bit (BadCRC 10B8B Dispar Handshk PHYInt LinkSeq
//     TrStaTrns UnrecFIS UnrecovData Proto), "limiting SATA link speed", "link is
//     slow to respond", "SATA link down", "reset failed, giving up", "ataN.DD:
//     disabled", "failed command: …", "qc timeout", "error: { UNC | IDNF | AMNF }"
//     (media) and "{ ICRC }" (cable);
//   - SCSI/SAS: "Sense Key : Medium Error | Hardware Error | Aborted Command"
//     (and 0x3/0x4/0xb; the "Add. Sense:" line after it, such as "Unrecovered
//     read error" or QEMU's "I/O process terminated", says the same again and
//     is not counted twice), "[FAILED] Result: hostbyte=…" other than DID_OK
//     (timeouts: DID_TIME_OUT, DRIVER_TIMEOUT, driverbyte=0x06, UNKNOWN(0x2003)),
//     "timing out command", "attempting task abort", "Medium access timeout
//     failure", "Device offlined", "rejecting I/O to offline device";
//   - USB storage: "uas_eh_abort_handler", "uas_eh_device_reset_handler start"
//     (and bus reset), "usb B-P: reset … USB device number N", "USB disconnect",
//     "device descriptor read … error", "device not accepting address";
//   - NVMe: "I/O … QID N timeout, aborting | reset controller" (old and 6.x
//     wordings), "controller is down; will reset", "Device not ready; aborting
//     reset", "Removing after probe failure", "Disabling device after reset
//     failure", "frozen state error detected", and the per-command "nvme0n1:
//     Read(0x2) @ LBA N, … (sct 0x2 / sc 0x81)" report.
func Classify(msg string) (Finding, bool) {
	if len(msg) < 8 {
		return Finding{}, false
	}
	switch msg[0] {
	case 'a':
		if strings.HasPrefix(msg, "ata") {
			return classifyATA(msg)
		}
	case 's':
		if rest, ok := strings.CutPrefix(msg, "sd "); ok {
			return classifySCSI(rest)
		}
		if rest, ok := strings.CutPrefix(msg, "scsi "); ok {
			return classifySCSI(rest)
		}
	case 'u':
		if rest, ok := strings.CutPrefix(msg, "usb "); ok {
			return classifyUSB(rest)
		}
	case 'n':
		if strings.HasPrefix(msg, "nvme nvme") {
			return classifyNVMeController(msg)
		}
		if strings.HasPrefix(msg, "nvme") {
			return classifyNVMeNamespace(msg)
		}
	case 'b':
		if rest, ok := strings.CutPrefix(msg, "blk_update_request: "); ok {
			return classifyBlock(rest)
		}
	case 'e':
		if rest, ok := strings.CutPrefix(msg, "end_request: "); ok {
			return classifyBlock(rest)
		}
	case 'p':
		if rest, ok := strings.CutPrefix(msg, "print_req_error: "); ok {
			return classifyBlock(rest)
		}
	case 'B':
		if rest, ok := strings.CutPrefix(msg, "Buffer I/O error on dev"); ok {
			return classifyBufferIO(rest)
		}
	case 'I', 'c', 't', 'r':
		// Since 5.x the block layer prints without a function prefix.
		return classifyBlock(msg)
	}
	return Finding{}, false
}

// blockErrors are the block layer's names for a failed request
// (block/blk-core.c blk_errors) that are about a disk's health, with the
// kind each says; the others (thin-provisioning space, kernel resources,
// unsupported operations) are not findings.
var blockErrors = [...]struct {
	prefix string
	kind   Kind
}{
	{"I/O error, dev ", KindIOError},
	{"critical medium error, dev ", KindMediumError},
	{"critical target error, dev ", KindTargetError},
	{"timeout error, dev ", KindTimeout},
	{"recoverable transport error, dev ", KindLinkError},
	{"critical nexus error, dev ", KindIOError},
	{"protection error, dev ", KindIOError},
}

// classifyBlock reads "<name> error, dev sdb, sector 2048 op 0x0:(READ)
// flags 0x0 phys_seg 1 prio class 0" and the older forms without "op".
func classifyBlock(s string) (Finding, bool) {
	var kind Kind
	for _, e := range blockErrors {
		if rest, ok := strings.CutPrefix(s, e.prefix); ok {
			kind, s = e.kind, rest
			break
		}
	}
	if kind == "" {
		return Finding{}, false
	}
	name, rest := s, ""
	if j := strings.IndexByte(s, ','); j >= 0 {
		name, rest = s[:j], s[j:]
	}
	if !isDiskName(name) {
		return Finding{}, false
	}
	f := Finding{Kind: kind, Ref: Ref{Kind: "block", Name: wholeDisk(name)}, Sector: -1}
	if after, ok := strings.CutPrefix(rest, ", sector "); ok {
		if n, tail, ok := leadingNumber(after); ok {
			f.Sector = n
			rest = tail
		}
	}
	if j := strings.Index(rest, ":("); j >= 0 {
		if k := strings.IndexByte(rest[j:], ')'); k > 2 {
			f.Op = rest[j+2 : j+k]
		}
	}
	return f, true
}

// classifyBufferIO reads " sdb1, logical block 0, async page read" (after
// "Buffer I/O error on dev") and the older "ice sdb1, logical block 0".
func classifyBufferIO(s string) (Finding, bool) {
	s = strings.TrimPrefix(s, "ice")
	s = strings.TrimPrefix(s, " ")
	name, rest, _ := strings.Cut(s, ",")
	if !isDiskName(name) {
		return Finding{}, false
	}
	f := Finding{Kind: KindBufferIOError, Ref: Ref{Kind: "block", Name: wholeDisk(name)}, Sector: -1}
	switch {
	case strings.HasSuffix(rest, " write"):
		f.Op = "WRITE"
	case strings.HasSuffix(rest, " read"):
		f.Op = "READ"
	}
	return f, true
}

// leadingNumber reads the decimal number at the start of s.
func leadingNumber(s string) (int64, string, bool) {
	var n int64
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n > (1<<62)/10 {
			return 0, s, false
		}
		n = n*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, s, false
	}
	return n, s[i:], true
}

// isDiskName is false for devices that are not disks zwatch watches
// (optical drives and floppies, whose errors are mostly "no medium") and
// for text that cannot be a kernel name.
func isDiskName(name string) bool {
	if name == "" || len(name) > 32 || strings.ContainsAny(name, " /:[]") {
		return false
	}
	for _, p := range []string{"sr", "fd"} {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return false
		}
	}
	return true
}

// wholeDisk turns a partition's kernel name into its disk's: sdb1 → sdb,
// nvme0n1p2 → nvme0n1, mmcblk0p1 → mmcblk0; other names are kept.
func wholeDisk(name string) string {
	for _, p := range []string{"nvme", "mmcblk"} {
		if strings.HasPrefix(name, p) {
			if i := strings.LastIndexByte(name, 'p'); i > len(p) && allDigits(name[i+1:]) && isDigitByte(name[i-1]) {
				return name[:i]
			}
			return name
		}
	}
	for _, p := range []string{"sd", "vd", "xvd", "hd"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			end := len(rest)
			for end > 0 && isDigitByte(rest[end-1]) {
				end--
			}
			if end > 0 && end < len(rest) && isLetters(rest[:end]) {
				return name[:len(p)+end]
			}
			return name
		}
	}
	return name
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// hasWord reports whether list (space-separated) holds word as a whole
// token, without splitting (no allocation).
func hasWord(list, word string) bool {
	from := 0
	for {
		i := strings.Index(list[from:], word)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(word)
		if (start == 0 || list[start-1] == ' ') && (end == len(list) || list[end] == ' ') {
			return true
		}
		from = start + 1
	}
}
