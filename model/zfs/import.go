package zfs

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrNotImport is returned when input does not look like `zpool import`.
var ErrNotImport = errors.New("zfs: input is not zpool import output")

// ParseImport parses the listing of `zpool import` and `zpool import -c
// FILE` (ZoL 0.6+, OpenZFS 2.x, illumos): one block per pool found but not
// imported, with the same "label:" sections and config tree as zpool
// status, plus "id:". When there is nothing to import zpool prints "no
// pools available to import" on stderr and nothing on stdout: empty input
// (or that message, or -c's "cachefile import failed, retrying" alone)
// gives nil, nil. Text with no pool block, or blocks
// without an id (zpool status output), is ErrNotImport.
func ParseImport(r io.Reader) ([]ImportablePool, error) {
	lr := newLineReader(r)
	blocks, pre := splitPoolBlocks(lr)
	if err := lr.readErr(); err != nil {
		return nil, fmt.Errorf("zfs: reading zpool import: %w", err)
	}
	if len(blocks) == 0 {
		if pre.blank || pre.noImport {
			return nil, nil
		}
		return nil, ErrNotImport
	}
	out := make([]ImportablePool, 0, len(blocks))
	for i, b := range blocks {
		ip, err := importablePool(b)
		if err != nil {
			return out, fmt.Errorf("zfs: zpool import, pool block %d: %w", i+1, err)
		}
		out = append(out, ip)
	}
	return out, nil
}

// importFoundNothing recognises what zpool import prints before it finds
// nothing: "no pools available to import" (stderr on OpenZFS 2.x, stdout
// on some releases) and, with -c, "cachefile import failed, retrying" on
// stdout before the device scan (seen on OpenZFS 2.3.2 with every disk of
// the cached pool gone).
func importFoundNothing(line string) bool {
	t := strings.TrimSpace(line)
	return t == "no pools available to import" || t == "cachefile import failed, retrying"
}

// importablePool reads one block. The sections and the config tree are
// those of zpool status, so parsePoolBlock reads them; only "id:" is new.
func importablePool(secs []section) (ImportablePool, error) {
	id := ""
	for _, s := range secs {
		if s.label == "id" && len(s.lines) > 0 {
			id = strings.TrimSpace(s.lines[0])
		}
	}
	// Dates do not occur in an import listing; the zone is irrelevant.
	p := parsePoolBlock(secs, time.UTC)
	if p.Name == "" {
		return ImportablePool{}, fmt.Errorf("a pool: line without a name")
	}
	if id == "" {
		return ImportablePool{}, fmt.Errorf("pool %q has no id: line (zpool status output instead of zpool import?): %w", p.Name, ErrNotImport)
	}
	ip := ImportablePool{
		Name:   p.Name,
		ID:     id,
		State:  p.State,
		Status: p.Status,
		Action: p.Action,
	}
	for _, cv := range p.AllVdevs() {
		for _, leaf := range cv.Vdev.Leaves() {
			ip.Devices++
			if !leafPresent(cv.Class, leaf) {
				ip.Missing = append(ip.Missing, missingName(leaf))
			}
		}
	}
	for _, n := range p.Notes {
		if t, ok := strings.CutPrefix(n, "config: "); ok {
			ip.Notes = append(ip.Notes, t)
		}
	}
	ip.Notes = joinWrapped(ip.Notes)
	return ip, nil
}

// leafPresent reports whether a device of the listing is usable: ONLINE,
// or a spare that is AVAIL.
func leafPresent(class string, v *Vdev) bool {
	if v.State == StateOnline {
		return true
	}
	return class == "spares" && (v.State == StateAvail || v.State == StateInUse)
}

// missingName is a missing device as printed, with its last known path
// when zpool names it by GUID ("123… was /dev/disk/by-id/…").
func missingName(v *Vdev) string {
	if v.Was != "" {
		return v.Name + " (was " + v.Was + ")"
	}
	return v.Name
}

// joinWrapped joins the lines of a config message zpool wraps at 80
// columns ("Additional devices are known to be part of this pool, though
// their" / "exact configuration cannot be determined.") into sentences.
func joinWrapped(lines []string) []string {
	var out []string
	open := false
	for _, l := range lines {
		if open {
			out[len(out)-1] += " " + l
		} else {
			out = append(out, l)
		}
		open = !strings.HasSuffix(l, ".") && !strings.HasSuffix(l, ":")
	}
	return out
}
