package kernlog

import "strings"

// classifyATA reads libata's "ataN: …" (a port) and "ataN.DD: …" (a device
// on it) messages.
func classifyATA(msg string) (Finding, bool) {
	i := len("ata")
	for i < len(msg) && isDigitByte(msg[i]) {
		i++
	}
	if i == len("ata") {
		return Finding{}, false
	}
	if i < len(msg) && msg[i] == '.' {
		j := i + 1
		for j < len(msg) && isDigitByte(msg[j]) {
			j++
		}
		if j == i+1 {
			return Finding{}, false
		}
		i = j
	}
	body, ok := strings.CutPrefix(msg[i:], ": ")
	if !ok {
		return Finding{}, false
	}
	ref := Ref{Kind: "ata", Name: msg[:i]}
	kind, op, ok := ataKind(body)
	if !ok {
		return Finding{}, false
	}
	return Finding{Kind: kind, Ref: ref, Sector: -1, Op: op}, true
}

func ataKind(body string) (Kind, string, bool) {
	switch {
	case strings.HasPrefix(body, "hard resetting link"),
		strings.HasPrefix(body, "soft resetting link"),
		strings.HasPrefix(body, "COMRESET failed"),
		strings.HasPrefix(body, "softreset failed"):
		return KindLinkReset, "", true
	case strings.HasPrefix(body, "SError: {"):
		if serrorHasInterfaceBit(body[len("SError: {"):]) {
			return KindLinkError, "", true
		}
	case strings.HasPrefix(body, "limiting SATA link speed"):
		// libata slows a link down after repeated interface errors.
		return KindLinkError, "", true
	case strings.HasPrefix(body, "link is slow to respond"):
		return KindLinkSlow, "", true
	case strings.HasPrefix(body, "SATA link down"),
		strings.HasPrefix(body, "reset failed, giving up"),
		body == "disabled":
		return KindLinkDown, "", true
	case strings.HasPrefix(body, "failed command: "):
		return KindCommandFailed, ataOp(body[len("failed command: "):]), true
	case strings.HasPrefix(body, "qc timeout"):
		return KindTimeout, "", true
	case strings.HasPrefix(body, "error: {"):
		// The device's error register: UNC, IDNF and AMNF are about the
		// medium, ICRC about the cable; ABRT alone says nothing more than
		// the failed command line does.
		bits := body[len("error: {"):]
		switch {
		case hasWord(bits, "UNC"), hasWord(bits, "IDNF"), hasWord(bits, "AMNF"):
			return KindMediumError, "", true
		case hasWord(bits, "ICRC"):
			return KindLinkError, "", true
		}
	}
	return "", "", false
}

// serrorHasInterfaceBit is true when a SError report (libata-eh.c
// ata_eh_link_report's names) holds a bit that says the signal on the wire
// was bad: CRC, 8b/10b decoding, disparity, handshake, PHY, link sequence,
// transport or unrecognised frames. PHYRdyChg, CommWake and DevExch alone
// come with every hotplug and reset and so are not counted; nor is
// RecovComm (the link dropped and came back), which comes with them.
func serrorHasInterfaceBit(bits string) bool {
	for _, b := range [...]string{"BadCRC", "10B8B", "Dispar", "Handshk", "PHYInt", "LinkSeq", "TrStaTrns", "UnrecFIS", "UnrecovData", "Proto"} {
		if hasWord(bits, b) {
			return true
		}
	}
	return false
}

// ataOp names the operation of an ATA command ("READ FPDMA QUEUED" →
// READ); other commands keep their name (IDENTIFY DEVICE, SMART).
func ataOp(cmd string) string {
	for _, op := range [...]string{"READ", "WRITE", "FLUSH"} {
		if strings.HasPrefix(cmd, op) {
			return op
		}
	}
	return strings.TrimSpace(cmd)
}
