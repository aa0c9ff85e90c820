package rules

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
)

// A disk outside any pool (a spare on the shelf of the case, a backup disk,
// a disk about to be added) can leave the machine and no pool rule notices.
// So the engine remembers the disks the inventory has listed (seenDisks,
// persisted, at most maxSeenDisks), and one that is gone from it and was
// no pool's vdev when last seen is DiskVanished. A pool's own disks are its
// VdevState's and PoolMissing's to report.

// Bounds on the disk memory of one host.
const (
	maxSeenDisks = 64
	// seenDiskRefresh: how stale a present disk's "last seen" may get
	// before it is written again; every inventory is not worth a write.
	seenDiskRefresh = time.Hour
)

// seenDisk is a disk the inventory listed.
type seenDisk struct {
	// ID is the disk as last listed: kernel name, by-id name, model.
	ID       disk.Identity `json:"id"`
	LastSeen time.Time     `json:"last_seen"`
	// GoneSince is the first inventory that did not list it.
	GoneSince *time.Time `json:"gone_since,omitempty"`
	// Pool is the last pool it was seen a vdev of, and InPool when: a disk
	// replaced out of its pool (zpool replace, detach) and pulled within
	// replacedGrace is the end of that replacement, not news.
	Pool   string    `json:"pool,omitempty"`
	InPool time.Time `json:"in_pool,omitempty"`
}

// seenDisks is what DiskVanished remembers of a host: the disks the
// inventory listed, by seenKey.
type seenDisks struct {
	Disks map[string]*seenDisk `json:"disks,omitempty"`
}

// seenDisksMemory: version 0 is 41d2458's seen_disks, the map alone.
var seenDisksMemory = remember("seen_disks", 1, intoField(func(m *seenDisks) *map[string]*seenDisk { return &m.Disks }))

// replacedGrace: how long after leaving its pool a disk's removal is
// taken as part of its replacement.
const replacedGrace = 7 * 24 * time.Hour

// leftWithPool: the disk was a pool's vdev when it went, or had left its
// pool shortly before (replaced, detached).
func (s *seenDisk) leftWithPool() bool {
	return s.Pool != "" && s.GoneSince != nil && s.GoneSince.Sub(s.InPool) < replacedGrace
}

// seenKey is what tells a disk apart across renames and reboots: its
// serial, else its WWN; a disk with neither is not remembered.
func seenKey(id disk.Identity) string {
	if id.Serial != "" {
		return id.Serial
	}
	return id.WWN
}

// diskSettings are rules.disks: disks that leave the machine outside a pool.
type diskSettings struct {
	// Ignore lists serial or by-id globs (path.Match) of disks that come and
	// go on purpose (a rotated USB backup disk): DiskVanished skips them.
	Ignore []string `yaml:"ignore" note:"Disks (serial or by-id globs) that come and go on purpose, such as a rotated USB backup disk."`
}

var disksConfig = defineConfig("disks", diskSettings{})

func (d diskSettings) validate(p string, errs *config.Errors) {
	for i, g := range d.Ignore {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			errs.Add(fmt.Sprintf("%s.ignore[%d]", p, i), g, "want a serial or by-id glob such as WD-WX32* or usb-Seagate_*")
		}
	}
}

func diskVanishedRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Disks, facts.DiskForget, facts.ZpoolStatus},
		Eval:  poolsEval(ruleDiskVanished),
		Config: []config.RuleSection{
			disksConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameDiskVanished,
			// A USB disk that resets comes back under a new kernel name
			// within seconds: that is LinkResets' news, not this.
			For:      2 * time.Minute,
			Severity: "warning",
			Condition: "a disk the inventory listed (sysfs, by serial; remembered across restarts, at most 64) is gone from it, and was no pool's vdev when it went nor in the 7 days before (a disk replaced out of its pool and pulled is not news), and is no removable medium (USB stick, memory card); " +
				"resolved when it is back or after `zwatch forget-disk SERIAL`; not for `disks.ignore`; `for` {for}",
		}},
		Memory: []memoryDef{seenDisksMemory},
	}
}

// noteInventory records the disks the inventory lists, and when the
// remembered ones left.
func (e *Engine) noteInventory(h *hostState, ids []disk.Identity, now time.Time) {
	mem := seenDisksMemory.of(h)
	if mem.Disks == nil {
		mem.Disks = map[string]*seenDisk{}
	}
	seen := mem.Disks
	present := map[string]bool{}
	for _, id := range ids {
		key := seenKey(id)
		if key == "" {
			continue
		}
		present[key] = true
		pool := h.poolOfDisk(key, id, true)
		s := seen[key]
		if s == nil {
			s = &seenDisk{ID: id, LastSeen: now}
			seen[key] = s
		} else if s.GoneSince == nil && (pool == "" || pool == s.Pool) && s.ID.Kernel == id.Kernel && s.ID.ByID == id.ByID && now.Sub(s.LastSeen) < seenDiskRefresh {
			continue // nothing new worth a state write
		}
		s.ID, s.LastSeen, s.GoneSince = id, now, nil
		if pool != "" {
			s.Pool, s.InPool = pool, now
		}
		h.dirty = true
	}
	for key, s := range seen {
		if !present[key] && s.GoneSince == nil {
			t := now
			s.GoneSince = &t
			h.dirty = true
		}
	}
	for len(seen) > maxSeenDisks {
		delete(seen, oldestSeenDisk(seen))
		h.dirty = true
	}
}

// disks are the disks remembered; nil when none (m is nil).
func (m *seenDisks) disks() map[string]*seenDisk {
	if m == nil {
		return nil
	}
	return m.Disks
}

func oldestSeenDisk(m map[string]*seenDisk) string {
	var key string
	for _, k := range sortedKeys(m) {
		if key == "" || m[k].LastSeen.Before(m[key].LastSeen) {
			key = k
		}
	}
	return key
}

// poolOfDisk is the pool whose leaf the disk is, by serial or by-id name,
// and with byKernel by kernel name too: only for a disk present now, as a
// gone disk's kernel name may be another disk's by now.
func (h *hostState) poolOfDisk(key string, id disk.Identity, byKernel bool) string {
	if l := h.leafOfSerial(key); l != nil {
		return l.Pool
	}
	dev := ""
	if byKernel && id.Kernel != "" {
		dev = "/dev/" + id.Kernel
	}
	for _, l := range h.Leaves {
		for _, p := range []string{l.Path, l.Name, l.Was} {
			if p != "" && matchesDisk(p, id, dev) {
				return l.Pool
			}
		}
	}
	return ""
}

// forgetDisk drops a disk the owner removed for good (zwatch forget-disk):
// by serial, WWN or by-id name. It reports whether one was known.
func (e *Engine) forgetDisk(h *hostState, name string) bool {
	seen := seenDisksMemory.peek(h).disks()
	for key, s := range seen {
		if key == name || diskNamed(s.ID, name) {
			delete(seen, key)
			h.dirty = true
			return true
		}
	}
	return false
}

// diskNamed reports whether name is the disk's serial, WWN or a by-id name.
func diskNamed(id disk.Identity, name string) bool {
	if name == id.Serial || (id.WWN != "" && strings.EqualFold(name, id.WWN)) {
		return true
	}
	for _, n := range append([]string{id.ByID}, id.ByIDAll...) {
		if n != "" && (name == n || name == filepath.Base(n)) {
			return true
		}
	}
	return false
}

// ignoredDisk: rules.disks.ignore names it (serial or by-id glob).
func (e *Engine) ignoredDisk(id disk.Identity) bool {
	names := []string{id.Serial, id.WWN}
	for _, n := range append([]string{id.ByID}, id.ByIDAll...) {
		if n != "" {
			names = append(names, n, filepath.Base(n))
		}
	}
	for _, g := range disksConfig.of(&e.cfg).Ignore {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok && n != "" {
				return true
			}
		}
	}
	return false
}

func ruleDiskVanished(c *evalCtx) {
	h := c.h
	seen := seenDisksMemory.peek(h).disks()
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		s := seen[key]
		// Removable media (the kernel's flag: USB sticks, memory cards) come
		// and go by design; USB and SATA disks do not carry it.
		if s.GoneSince == nil || s.ID.Removable || s.leftWithPool() || c.e.ignoredDisk(s.ID) || h.poolOfDisk(key, s.ID, false) != "" {
			continue
		}
		emitDiskVanished(c, key, s)
	}
}

func emitDiskVanished(c *evalCtx, key string, s *seenDisk) {
	id := s.ID
	what := key
	var parts []string
	if id.Kernel != "" {
		parts = append(parts, id.Kernel)
	}
	if id.Model != "" {
		parts = append(parts, id.Model)
	}
	if len(parts) > 0 {
		what += " (" + strings.Join(parts, ", ") + ")"
	}
	gone := s.GoneSince.UTC()
	ev := map[string]string{"serial": id.Serial, "gone_since": gone.Format(time.RFC3339), "last_seen": s.LastSeen.UTC().Format(time.RFC3339)}
	for k, v := range map[string]string{"kernel": id.Kernel, "by_id": id.ByID, "model": id.Model, "wwn": id.WWN, "transport": id.Transport} {
		if v != "" {
			ev[k] = v
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Disk %s, in no pool, was listed on this machine until %s and is gone since %s.", what, s.LastSeen.UTC().Format("2006-01-02 15:04 MST"), gone.Format("2006-01-02 15:04 MST"))
	switch id.Transport {
	case disk.TransportUSB:
		b.WriteString(" A USB disk leaves when it is unplugged, or when its enclosure, bridge or power supply fails: check the cable and the enclosure's power, and `dmesg` for \"USB disconnect\".")
	default:
		b.WriteString(" Check its cable, power and bay, and `dmesg` for what the kernel said when it left; `ls -l /dev/disk/by-id` lists the disks present.")
	}
	fmt.Fprintf(&b, "\nIf it was removed on purpose: `zwatch forget-disk %s`. A disk that comes and goes on purpose (a rotated backup disk) belongs under rules.disks.ignore.", shellWord(key))
	c.emit(cond{name: nameDiskVanished, severity: alert.Warning, serial: id.Serial,
		labels:   map[string]string{"disk": key},
		summary:  fmt.Sprintf("disk %s has vanished", what),
		desc:     b.String(),
		evidence: ev})
}
