package kernlog

import "strings"

// classifySCSI reads what follows "sd " or "scsi ": "2:0:0:0: [sdb] tag#0
// …" (a disk, by its SCSI address and, once sd has bound it, its block
// name), "2:0:0:0: …" and "host2: …" (a SCSI host: a HBA or a UAS
// enclosure's bridge).
func classifySCSI(s string) (Finding, bool) {
	addr, body, ok := strings.Cut(s, ": ")
	if !ok {
		return Finding{}, false
	}
	var ref Ref
	switch {
	case isSCSIAddress(addr):
		ref = Ref{Kind: "scsi", Name: addr}
	case strings.HasPrefix(addr, "host") && allDigits(addr[len("host"):]):
		ref = Ref{Kind: "scsi", Name: addr}
	default:
		return Finding{}, false
	}
	if rest, ok := strings.CutPrefix(body, "["); ok {
		name, after, ok := strings.Cut(rest, "]")
		if !ok || !isDiskName(name) {
			return Finding{}, false
		}
		ref = Ref{Kind: "block", Name: name}
		body = strings.TrimLeft(after, " ")
	}
	if rest, ok := strings.CutPrefix(body, "tag#"); ok {
		_, after, _ := strings.Cut(rest, " ")
		body = strings.TrimLeft(after, " ")
	}
	kind, ok := scsiKind(body)
	if !ok {
		return Finding{}, false
	}
	return Finding{Kind: kind, Ref: ref, Sector: -1}, true
}

// isSCSIAddress: "H:C:T:L", four numbers.
func isSCSIAddress(s string) bool {
	for n := 0; n < 4; n++ {
		i := 0
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
		if i == 0 {
			return false
		}
		s = s[i:]
		if n < 3 {
			if s == "" || s[0] != ':' {
				return false
			}
			s = s[1:]
		}
	}
	return s == ""
}

func scsiKind(body string) (Kind, bool) {
	switch {
	case strings.HasPrefix(body, "Sense Key : "):
		// One failed command prints "FAILED Result: hostbyte=DID_OK", then
		// "Sense Key : …" and "Add. Sense: …": the sense key line is its
		// one finding, so that a bad sector is not counted three times.
		return senseKeyKind(body[len("Sense Key : "):])
	case strings.HasPrefix(body, "Add. Sense: "):
		return "", false
	case strings.Contains(body, "Result: hostbyte="):
		// "FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE" (4.x+),
		// " Result: hostbyte=… driverbyte=DRIVER_TIMEOUT" (older), and the
		// same after "Synchronize Cache(10) failed:".
		// A timeout shows as DID_TIME_OUT, as DRIVER_TIMEOUT (before 5.14)
		// or numerically as driverbyte=0x06 or the UNKNOWN(0x2003)
		// disposition (TIMEOUT_ERROR) of 5.x.
		if strings.Contains(body, "DID_TIME_OUT") || strings.Contains(body, "DRIVER_TIMEOUT") ||
			strings.Contains(body, "driverbyte=0x06") || strings.HasPrefix(body, "UNKNOWN(0x2003)") {
			return KindTimeout, true
		}
		// The target is gone (DID_BAD_TARGET: the cache flush of a
		// hot-unplugged disk, capture l1): the disk left, it did not fail
		// an I/O. (DID_NO_CONNECT, I/O to a disk the kernel took offline
		// after failed resets, stays a failed command.)
		if strings.Contains(body, "hostbyte=DID_BAD_TARGET") {
			return KindGone, true
		}
		// The device answered (DID_OK, 0x00 before names were printed):
		// its sense lines follow and say what failed.
		if strings.Contains(body, "hostbyte=DID_OK ") || strings.Contains(body, "hostbyte=0x00 ") {
			return "", false
		}
		return KindCommandFailed, true
	case strings.HasPrefix(body, "uas_eh_abort_handler"):
		return KindCommandFailed, true
	case strings.HasPrefix(body, "uas_eh_device_reset_handler"), strings.HasPrefix(body, "uas_eh_bus_reset_handler"):
		// One reset prints "… start" then "… success" or "… FAILED err
		// -19"; count the start (and the bare form of older kernels) only.
		_, after, _ := strings.Cut(body, "_handler")
		if after != "" && after != " start" {
			return "", false
		}
		return KindLinkReset, true
	case strings.HasPrefix(body, "timing out command"), strings.HasPrefix(body, "attempting task abort"),
		strings.HasPrefix(body, "Medium access timeout failure"):
		return KindTimeout, true
	case strings.HasPrefix(body, "Device offlined"):
		return KindLinkDown, true
	case strings.HasPrefix(body, "rejecting I/O to offline device"):
		return KindIOError, true
	}
	return "", false
}

// senseKeyKind: "Medium Error [current] [descriptor]" and the numeric form
// older kernels print for keys they had no name for.
func senseKeyKind(key string) (Kind, bool) {
	switch {
	case strings.HasPrefix(key, "Medium Error"), strings.HasPrefix(key, "0x3 "), key == "0x3":
		return KindMediumError, true
	case strings.HasPrefix(key, "Hardware Error"), strings.HasPrefix(key, "0x4 "), key == "0x4":
		return KindTargetError, true
	case strings.HasPrefix(key, "Aborted Command"), strings.HasPrefix(key, "0xb "), key == "0xb":
		return KindCommandFailed, true
	}
	return "", false
}
