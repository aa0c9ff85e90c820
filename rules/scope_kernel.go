package rules

import (
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
)

// The kernel scope: what the kernel logged about each disk, folded into
// bursts. A kernel.log fact carries counts since the previous one, so the
// engine keeps the history itself (kernelMemory, persisted): the bursts
// within rules.kernel.window and the counts of the episode that began with
// the first of them. An episode ends after rules.kernel.clear of silence.

// Bounds of the kernel history of one host.
const (
	maxKernelDisks  = 64
	maxKernelBursts = 64
	maxKernelText   = 512
)

// kernelHistory is what the kernel scope remembers of a host: the disks
// the kernel named, by serial or, without one, by "ref:"+Ref, at most
// maxKernelDisks. The scope's rules (KernelDiskErrors, LinkResets) share
// it, each judging one disk's history, and DiskIncident names the disk
// from it.
type kernelHistory struct {
	Disks map[string]*kernelDisk `json:"disks,omitempty"`
}

// kernelMemory: version 0 is 41d2458's kernel, the map alone.
var kernelMemory = remember("kernel", 1, intoField(func(m *kernelHistory) *map[string]*kernelDisk { return &m.Disks }))

// disks is the history by disk; nil when there is none (m is nil).
func (m *kernelHistory) disks() map[string]*kernelDisk {
	if m == nil {
		return nil
	}
	return m.Disks
}

// kernelDisk is one disk (or port, when it maps to no disk) the kernel
// named.
type kernelDisk struct {
	Ref       string `json:"ref"`
	Serial    string `json:"serial,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	ByID      string `json:"by_id,omitempty"`
	Transport string `json:"transport,omitempty"`
	// Media are the failed I/Os and medium errors, Link the resets and link
	// errors: each is its own alert with its own bursts.
	Media kernelEpisode `json:"media,omitzero"`
	Link  kernelEpisode `json:"link,omitzero"`
}

// kernelEpisode is the kernel's complaints of one cause about one disk since
// the first burst after the last silence of rules.kernel.clear.
type kernelEpisode struct {
	// Bursts are the start times (unix seconds) of the bursts within
	// rules.kernel.window, oldest first.
	Bursts []int64 `json:"bursts,omitempty"`
	// First and Last are the first and the latest record of the episode.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Counts are the records by kernlog.Kind.
	Counts map[string]uint64 `json:"counts,omitempty"`
	// Example is a message of the latest fact, cut to maxKernelText bytes.
	Example string `json:"example,omitempty"`
}

func (k *kernelEpisode) active() bool { return k.total() > 0 }

// total is the number of records of the episode.
func (k *kernelEpisode) total() uint64 {
	var n uint64
	for _, c := range k.Counts {
		n += c
	}
	return n
}

// largest is the count of the episode's most frequent kind.
func (k *kernelEpisode) largest() uint64 {
	var n uint64
	for _, c := range k.Counts {
		n = max(n, c)
	}
	return n
}

// add counts n records of each kind, logged from first to last. A record
// later than burst_gap after the episode's last one starts a new burst.
func (k *kernelEpisode) add(counts map[string]uint64, first, last time.Time, example string, gap time.Duration) {
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return
	}
	if !k.active() {
		*k = kernelEpisode{First: first, Counts: map[string]uint64{}}
	}
	if len(k.Bursts) == 0 || first.Sub(k.Last) > gap {
		k.Bursts = append(k.Bursts, first.Unix())
		if len(k.Bursts) > maxKernelBursts {
			k.Bursts = k.Bursts[len(k.Bursts)-maxKernelBursts:]
		}
	}
	for kind, c := range counts {
		k.Counts[kind] += c
	}
	if last.After(k.Last) {
		k.Last = last
	}
	if first.Before(k.First) {
		k.First = first
	}
	if example != "" {
		k.Example = cutText(example, maxKernelText)
	}
}

// age forgets the bursts that ended before window and, after clear of
// silence, the whole episode; it reports whether anything changed. A burst
// ended before the next began, the latest at the episode's last record, so
// a storm that goes on for longer than the window still counts.
func (k *kernelEpisode) age(now time.Time, window, clear time.Duration) bool {
	if !k.active() {
		return false
	}
	if now.Sub(k.Last) >= clear {
		*k = kernelEpisode{}
		return true
	}
	from := now.Add(-window).Unix()
	i := 0
	for i < len(k.Bursts) {
		end := k.Last.Unix()
		if i+1 < len(k.Bursts) {
			end = k.Bursts[i+1]
		}
		if end > from {
			break
		}
		i++
	}
	if i == 0 {
		return false
	}
	k.Bursts = k.Bursts[i:]
	return true
}

// cutText bounds s to n bytes without splitting a UTF-8 sequence.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// kernelEval judges one disk the kernel complained about.
type kernelEval func(c *evalCtx, d *kernelDisk)

func (kernelEval) scope() Scope { return ScopeKernel }

// observeKernelLog folds a kernel.log fact into the host's kernel history
// and judges it. Records of the gone kind are DiskVanished's, not these rules'.
func observeKernelLog(o observation, env bus.Envelope, d *facts.KernelLogData) error {
	e, h, now := o.e, o.h, o.now
	if d.Lost > 0 || d.Dropped > 0 {
		e.log.Debug("kernel log records not counted", "host", env.Host, "lost", d.Lost, "dropped", d.Dropped, "source", d.Source)
	}
	cfg := kernelConfig.of(&e.cfg)
	for i := range d.Disks {
		dl := &d.Disks[i]
		media, link := splitCauses(dl.Counts)
		if len(media) == 0 && len(link) == 0 {
			continue
		}
		kd := h.kernelDisk(dl)
		first, last := kernelTimes(dl.First, dl.Last, now)
		kd.Media.add(media, first, last, exampleOf(dl.Examples, false), cfg.BurstGap.D())
		kd.Link.add(link, first, last, exampleOf(dl.Examples, true), cfg.BurstGap.D())
		if dl.Disk != nil && dl.Disk.Serial != "" {
			e.indexKernelDisk(h, dl.Disk, now)
		}
		h.dirty = true
	}
	e.evalKernel(h, now)
	return nil
}

// exampleOf picks the latest example about a link (link) or about failed
// I/O (!link), so each alert quotes a line of its own kind; any example
// when none is.
func exampleOf(examples []string, link bool) string {
	for i := len(examples) - 1; i >= 0; i-- {
		if f, ok := kernlog.Classify(examples[i]); ok && (f.Kind.Cause() == kernlog.CauseLink) == link {
			return examples[i]
		}
	}
	if len(examples) > 0 {
		return examples[len(examples)-1]
	}
	return ""
}

// splitCauses sorts a fact's counts into media/io and link kinds.
func splitCauses(counts map[string]int) (media, link map[string]uint64) {
	for kind, n := range counts {
		if n <= 0 {
			continue
		}
		switch kernlog.Kind(kind).Cause() {
		case kernlog.CauseMedia, kernlog.CauseIO:
			media = addCount(media, kind, n)
		case kernlog.CauseLink:
			link = addCount(link, kind, n)
		}
	}
	return media, link
}

func addCount(m map[string]uint64, kind string, n int) map[string]uint64 {
	if m == nil {
		m = map[string]uint64{}
	}
	m[kind] += uint64(n)
	return m
}

// kernelTimes makes a fact's record times usable: missing ones are now,
// ones from the future (a wrong clock) are now, and last is not before first.
func kernelTimes(first, last, now time.Time) (time.Time, time.Time) {
	if last.IsZero() || last.After(now) {
		last = now
	}
	if first.IsZero() || first.After(last) {
		first = last
	}
	return first, last
}

// kernelDisk returns the history of the disk a fact entry names, making
// room for it if need be.
func (h *hostState) kernelDisk(dl *facts.KernelDiskLog) *kernelDisk {
	mem := kernelMemory.of(h)
	if mem.Disks == nil {
		mem.Disks = map[string]*kernelDisk{}
	}
	key := "ref:" + dl.Ref
	if dl.Disk != nil && dl.Disk.Serial != "" {
		key = dl.Disk.Serial
	}
	kd := mem.Disks[key]
	if kd == nil {
		for len(mem.Disks) >= maxKernelDisks {
			delete(mem.Disks, quietestKernelDisk(mem.Disks))
		}
		kd = &kernelDisk{}
		mem.Disks[key] = kd
	}
	kd.Ref = dl.Ref
	kd.Transport = transportOfRef(dl.Ref)
	if id := dl.Disk; id != nil {
		kd.Serial, kd.Kernel, kd.ByID = id.Serial, id.Kernel, id.ByID
		if id.Transport != "" {
			kd.Transport = id.Transport
		}
	}
	return kd
}

// quietestKernelDisk is the key of the disk whose latest record is oldest.
func quietestKernelDisk(disks map[string]*kernelDisk) string {
	var key string
	var at time.Time
	for _, k := range sortedKeys(disks) {
		last := disks[k].lastRecord()
		if key == "" || last.Before(at) {
			key, at = k, last
		}
	}
	return key
}

func (d *kernelDisk) lastRecord() time.Time {
	if d.Link.Last.After(d.Media.Last) {
		return d.Link.Last
	}
	return d.Media.Last
}

// transportOfRef guesses the transport from how the kernel named the port.
func transportOfRef(ref string) string {
	switch {
	case strings.HasPrefix(ref, "usb "):
		return disk.TransportUSB
	case strings.HasPrefix(ref, "ata"):
		return disk.TransportSATA
	case strings.HasPrefix(ref, "nvme"):
		return disk.TransportNVMe
	case strings.HasPrefix(ref, "scsi "):
		return disk.TransportSCSI
	}
	return ""
}

// indexKernelDisk makes a disk the follower identified known to the join
// (join.go), so its kernel alerts meet the ZFS alerts of its vdev even when
// SMART cannot read it (a USB bridge without pass-through). A disk SMART
// already describes keeps SMART's identity.
func (e *Engine) indexKernelDisk(h *hostState, id *disk.Identity, now time.Time) {
	if h.Disks[id.Serial] != nil {
		return
	}
	ref := &diskRef{ID: *id, Seen: now}
	if id.Kernel != "" {
		ref.Device = "/dev/" + id.Kernel
	}
	h.Disks[id.Serial] = ref
	for i := range h.Leaves {
		l := &h.Leaves[i]
		if l.Serial != "" {
			continue
		}
		for _, p := range []string{l.Path, l.Name, l.Was} {
			if matchesDisk(p, ref.ID, ref.Device) {
				l.Serial = id.Serial
				break
			}
		}
	}
}

// evalKernel ages the host's kernel history and runs the kernel rules over
// every disk with an episode.
func (e *Engine) evalKernel(h *hostState, now time.Time) {
	cfg := kernelConfig.of(&e.cfg)
	disks := kernelMemory.peek(h).disks()
	for _, key := range sortedKeys(disks) {
		kd := disks[key]
		mediaAged := kd.Media.age(now, cfg.Window.D(), cfg.Clear.D())
		linkAged := kd.Link.age(now, cfg.Window.D(), cfg.Clear.D())
		if mediaAged || linkAged {
			h.dirty = true
		}
		if !kd.Media.active() && !kd.Link.active() {
			delete(disks, key)
			h.dirty = true
		}
	}
	c := e.newCtx(h, now)
	keys := sortedKeys(disks)
	sort.SliceStable(keys, func(i, j int) bool { return disks[keys[i]].Ref < disks[keys[j]].Ref })
	for _, key := range keys {
		kd := disks[key]
		for _, rule := range e.rules.kernel {
			rule(c, kd)
		}
	}
	for i := range c.out {
		if c.out[i].serial != "" && c.out[i].pool == "" {
			c.out[i].pool = h.poolOfSerial(c.out[i].serial)
		}
	}
	e.apply(h, scopeKernel, c.out, now)
}

// hasScope reports whether an alert of scope is active.
func (h *hostState) hasScope(scope string) bool {
	for _, t := range h.Alerts {
		if t.Scope == scope && t.A.State != alert.Resolved {
			return true
		}
	}
	return false
}
