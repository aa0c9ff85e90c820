package collectors

import "github.com/zwatch/zwatch/model/zfs"

// leafCounters are the counters of one leaf that say it misbehaves.
type leafCounters struct {
	read, write, cksum, slow uint64
}

// maxUrgentPerPoll bounds the SMART reads one poll asks for: a controller
// that fails takes every disk's counters up at once, and a SMART read of
// each is the smart collector's normal round, not news.
const maxUrgentPerPoll = 8

// urgeRisen asks for an immediate SMART read of each leaf whose READ,
// WRITE, CKSUM or slow-I/O counter rose since the last poll, so the first
// page of a failing disk already carries its SMART data. A leaf seen for
// the first time is not news (its counters may be months old), nor is a
// counter that fell (zpool clear). Only the leaves of this reading are
// remembered, so the map is as big as the pools.
func (c *ZpoolStatus) urgeRisen(pools []*zfs.Pool) {
	if c.Urgent == nil {
		return
	}
	c.mu.Lock()
	prev := c.counters
	next := make(map[string]leafCounters, len(prev))
	var risen []string
	for _, p := range pools {
		if p == nil {
			continue
		}
		for _, cv := range p.AllVdevs() {
			for _, l := range cv.Vdev.Leaves() {
				path := leafTarget(l)
				if path == "" {
					continue
				}
				key := p.Name + "\x00" + l.GUID + "\x00" + path
				cur := leafCounters{read: l.ReadErrors, write: l.WriteErrors, cksum: l.ChecksumErrors}
				if l.SlowIOs != nil {
					cur.slow = *l.SlowIOs
				}
				next[key] = cur
				if old, ok := prev[key]; ok && rose(old, cur) && len(risen) < maxUrgentPerPoll {
					risen = append(risen, path)
				}
			}
		}
	}
	c.counters = next
	c.mu.Unlock()
	for _, path := range risen {
		c.Urgent(path)
	}
}

// rose says whether any counter went up.
func rose(old, cur leafCounters) bool {
	return cur.read > old.read || cur.write > old.write || cur.cksum > old.cksum || cur.slow > old.slow
}

// leafTarget is what the smart collector is asked to read for leaf l: its
// device path. A file vdev or a device whose path is unknown has none.
func leafTarget(l *zfs.Vdev) string {
	if l.Type != zfs.VdevDisk {
		return ""
	}
	if len(l.Path) > 0 && l.Path[0] == '/' {
		return l.Path
	}
	return ""
}

// urgentSmart is the smart collector's urgent read for the ZFS collectors
// that name misbehaving disks; nil when the environment has none (tests).
func urgentSmart(e Env) func(target string) {
	if e.Urgent == nil {
		return nil
	}
	return e.Urgent(SmartCollectorName)
}
