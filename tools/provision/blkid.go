package provision

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/execx"
)

// signature is one device's blkid -p -o export result.
type signature struct {
	device string
	kv     map[string]string
}

// String is the signature in words: "/dev/sdb1: ext4 labelled \"data\"".
func (g signature) String() string {
	var parts []string
	if t := g.kv["PTTYPE"]; t != "" {
		parts = append(parts, t+" partition table")
	}
	if t := g.kv["TYPE"]; t != "" {
		x := t
		if l := g.kv["LABEL"]; l != "" {
			if t == "zfs_member" {
				x += " of pool " + l
			} else {
				x += fmt.Sprintf(" labelled %q", l)
			}
		}
		parts = append(parts, x)
	}
	return g.device + ": " + strings.Join(parts, ", ")
}

// ParseBlkidExport reads `blkid -p -o export` output (KEY=value lines).
func ParseBlkidExport(b []byte) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok && k != "" {
			out[k] = strings.ReplaceAll(v, `\ `, " ")
		}
	}
	return out
}

// probe runs blkid -p on dev; exit 2 means blkid found nothing.
func (s *inspector) probe(dev string) (signature, error) {
	out, code, err := runOut(s.ctx, s.h, "blkid", "-p", "-o", "export", dev)
	if err != nil && !(execx.KindOf(err) == execx.KindFailed && code == 2) {
		return signature{}, err
	}
	kv := ParseBlkidExport(out)
	if code == 2 {
		kv = map[string]string{} // blkid: nothing found
	}
	return signature{device: dev, kv: kv}, nil
}
