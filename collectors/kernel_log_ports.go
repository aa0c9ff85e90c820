package collectors

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// portRebuildEvery and portMapMaxAge: the map of kernel names to disks is
// read again on a name it does not know (at once, before the record is
// counted) and, in the background, when it is older than a minute (a
// kernel name can pass to another disk) or the kernel announces a disk;
// at most this often. Reading sysfs took 2-4 s in the loaded e2e guest, so
// a record about a disk the map knows never waits for it.
const (
	portRebuildEvery = 5 * time.Second
	portMapMaxAge    = time.Minute
)

// portCache is the disk.PortMap the follower names disks from. The reader
// goroutine looks names up; a refresh in the background swaps the map in.
type portCache struct {
	ctx  context.Context
	root string
	log  *slog.Logger
	gap  time.Duration // portRebuildEvery; shorter in tests

	mu      sync.Mutex
	m       *disk.PortMap
	built   time.Time // when the last (re)build started
	waiting bool      // a background rebuild is due and has not started
	running bool      // a background rebuild reads sysfs now
	again   bool      // asked for while one ran: run once more
}

func (c *portCache) minGap() time.Duration { return cmp.Or(c.gap, portRebuildEvery) }

func (c *portCache) lookup(ref kernlog.Ref, now time.Time) []disk.Identity {
	c.mu.Lock()
	m, age := c.m, now.Sub(c.built)
	c.mu.Unlock()
	ids := m.Lookup(ref.Kind, ref.Name)
	switch {
	case len(ids) == 0 && age >= c.minGap():
		c.rebuild(now)
		c.mu.Lock()
		m = c.m
		c.mu.Unlock()
		ids = m.Lookup(ref.Kind, ref.Name)
	case age > portMapMaxAge:
		c.refresh(now)
	}
	return ids
}

// announced is told that the kernel attached a disk under the kernel name
// (empty when the record does not say which). The name may have belonged
// to a disk that left (sdg of a pulled disk goes to the next one plugged
// in), so it stops standing for that disk at once: until the refresh has
// read the new one, records about the name are reported by name, never
// under the departed disk's serial.
func (c *portCache) announced(kernel string, now time.Time) {
	if kernel != "" {
		c.mu.Lock()
		c.m = c.m.Without(kernel)
		c.mu.Unlock()
	}
	c.refresh(now)
}

// refresh rebuilds the map in the background. One asked for while a
// rebuild waits or runs, or within portRebuildEvery of the last, is put
// off, never dropped: two disks plugged in a second apart are announced a
// second apart, and the first one's rebuild may read sysfs before the
// second one is in it.
func (c *portCache) refresh(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.waiting: // the one due reads sysfs after this was asked
	case c.running:
		c.again = true
	default:
		c.scheduleLocked(max(c.minGap()-now.Sub(c.built), 0), now)
	}
}

func (c *portCache) scheduleLocked(wait time.Duration, now time.Time) {
	c.waiting = true
	at := now.Add(wait) // in the callers' clock, which tests set
	time.AfterFunc(wait, func() { c.background(at) })
}

// background runs a rebuild due at at, then the one asked for meanwhile,
// portRebuildEvery later.
func (c *portCache) background(at time.Time) {
	c.mu.Lock()
	c.waiting, c.running = false, true
	c.mu.Unlock()
	if c.ctx == nil || c.ctx.Err() == nil {
		c.rebuild(at)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	if c.again && (c.ctx == nil || c.ctx.Err() == nil) {
		c.again = false
		c.scheduleLocked(c.minGap(), at)
	}
}

func (c *portCache) rebuild(now time.Time) {
	c.mu.Lock()
	c.built = now
	prev := c.m
	c.mu.Unlock()
	m, err := disk.ReadPorts(c.root, prev)
	if err != nil {
		c.log.Debug("kernel log names are reported without their disks", "err", err)
		return
	}
	c.mu.Lock()
	c.m = m
	c.mu.Unlock()
}

// announcedName is the kernel name in a record announcesDisk took: sd's
// "sd 0:0:7:0: [sdh] Attached SCSI disk", virtio_blk's "virtio_blk
// virtio5: [vdc] …"; empty for an NVMe controller's line, which names no
// disk.
func announcedName(msg string) string {
	open := strings.IndexByte(msg, '[')
	if open < 0 {
		return ""
	}
	end := strings.IndexByte(msg[open:], ']')
	if end < 0 {
		return ""
	}
	return msg[open+1 : open+end]
}
