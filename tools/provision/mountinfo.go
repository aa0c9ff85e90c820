package provision

import (
	"bufio"
	"bytes"
	"strings"
)

// mountEntry is what the mounted check reads of one mountinfo line.
type mountEntry struct {
	devNumber  string // "major:minor" of the mounted device
	mountPoint string // unescaped
	source     string // mount source after the "-": /dev/sdb1, tmpfs, ...
}

// parseMountinfo reads /proc/self/mountinfo (proc(5)); lines without the
// "-" separator or too short to hold the fields are skipped.
func parseMountinfo(data []byte) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+3 || len(f) < 5 {
			continue
		}
		out = append(out, mountEntry{devNumber: f[2], mountPoint: unescapeMount(f[4]), source: f[sep+2]})
	}
	return out
}

// unescapeMount undoes the octal escapes of mountinfo and /proc/swaps
// (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' {
			v := (s[i+1]-'0')*64 + (s[i+2]-'0')*8 + (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
