package kernlog

import "strings"

// Classify says what a kernel message reports about a disk or the port it
// sits on; ok false for anything else (most lines). It runs on every kernel
// record, so a message is first told apart by its first bytes and plain
// prefix checks: it allocates nothing and uses no regular expression.
//
// One failing I/O is often reported several times (the libata or SCSI
// lines, then the block layer's): each line is one finding, and callers
// count bursts, not lines.
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

// blockErrorKind maps the block layer's names for a failed request
// (block/blk-core.c blk_errors) to a kind; ok false for those that are not
// about a disk's health (thin-provisioning space, kernel resources).
func blockErrorKind(name string) (Kind, bool) {
	switch name {
	case "I/O", "critical nexus", "protection":
		return KindIOError, true
	case "critical medium":
		return KindMediumError, true
	case "critical target":
		return KindTargetError, true
	case "timeout":
		return KindTimeout, true
	case "recoverable transport":
		return KindLinkError, true
	}
	return "", false
}

// classifyBlock reads "<name> error, dev sdb, sector 2048 op 0x0:(READ)
// flags 0x0 phys_seg 1 prio class 0" and the older forms without "op".
func classifyBlock(s string) (Finding, bool) {
	const sep = " error, dev "
	i := strings.Index(s, sep)
	if i < 0 || i > len("recoverable transport") {
		return Finding{}, false
	}
	kind, ok := blockErrorKind(s[:i])
	if !ok {
		return Finding{}, false
	}
	rest := s[i+len(sep):]
	name := rest
	if j := strings.IndexByte(rest, ','); j >= 0 {
		name, rest = rest[:j], rest[j:]
	} else {
		rest = ""
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
