package rules

import (
	"encoding/json"
	"hash/fnv"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules/pipeline"
)

// stateVersion is bumped when hostState changes incompatibly; an older
// record is then dropped (alerts re-fire once) rather than misread. A
// rule's memory changes shape under its own version (memory.go), not
// this one, so a server of an earlier release still reads the alerts.
const stateVersion = 1

// Bounds that keep one host's persisted state small whatever happens.
const (
	// maxRateEntries bounds the recent rises a rule keeps of one counter
	// (vdev errors, slow I/Os).
	maxRateEntries = 64
)

// hostState is everything the engine remembers about one host. It is the
// value of key "host.<host>" in bus.StateBucket.
type hostState struct {
	Version int    `json:"v"`
	Host    string `json:"host"`
	// Book is the host's alerts and groups (package rules/pipeline),
	// saved flat beside the rest as alerts, groups and flushed.
	pipeline.Book
	// Leaves index this host's pool members and Disks its SMART identities,
	// so a SMART report and a vdev can be joined after a restart.
	Leaves     []leafRef                  `json:"leaves,omitempty"`
	Disks      map[string]*diskRef        `json:"disks,omitempty"`
	Collectors map[string]*collectorState `json:"collectors,omitempty"`
	Heartbeat  *time.Time                 `json:"heartbeat,omitempty"`
	// Applied is the facts stream sequence of the last fact applied from
	// each source (subject and collector; see ObserveSeq), at most
	// maxSources of them, and Stream the stream they count in.
	Applied map[string]uint64 `json:"applied,omitempty"`
	Stream  string            `json:"stream,omitempty"`
	// KnownPools are the pools this host has had imported, at most
	// maxKnownPools, and Forgotten those the owner said are gone for good
	// (pools.go): a known pool that is not imported is PoolMissing. They are
	// the engine's, not that rule's: while a known pool is away, the alerts
	// of every rule about it are kept instead of resolved (keep), and
	// forgetting it (zwatch forget-pool) resolves them all.
	KnownPools map[string]*knownPool `json:"known_pools,omitempty"`
	Forgotten  map[string]time.Time  `json:"forgotten_pools,omitempty"`
	// Memory is what the rules remember of the host between facts, each
	// rule's under the name of its memory (memory.go); a rule's file
	// declares it, and the catalogue lists it (Rule.Memory).
	Memory map[string]*memo `json:"memory,omitempty"`

	// Latest facts, in memory only: time-based rules re-read them at Tick.
	pools    []*zfs.Pool
	capacity *capacityFacts
	smart    map[string]*smart.Report
	// datasets, snapshots and imports are the latest facts of their kind;
	// statusSeen says a status arrived (its Pools may be empty), and the
	// times are when the pool listings were collected (imported, pools.go).
	datasets  *facts.DatasetsData
	snapshots *facts.SnapshotsData
	imports   *facts.PoolImportData
	// latest holds, by kind, the latest fact of each kind that only
	// declared scopes read (scope.go).
	latest     map[string]any
	statusSeen bool
	statusAt   time.Time
	capacityAt time.Time
	importAt   time.Time
	// snapshotsAt: when the snapshot listing was made.
	snapshotsAt time.Time
	// last holds the hash of the last status payload and of each disk's
	// SMART payload, and bySum the other way round: the same bytes again
	// carry no news (collectors repeat themselves every poll).
	last  map[string]uint64
	bySum map[uint64]string
	dirty bool
	// touched: only bookkeeping changed since the last save (when each
	// collector was last heard from, the last fact applied from each
	// source). No alert or notice depends on it at once, so it is saved
	// with the next real change or at its period (bookkeepingPeriod), and the
	// facts that changed only that are acknowledged without a save.
	touched bool
	// bookkeptAt is when this engine last wrote the state, or first found
	// its bookkeeping waiting (bookkeepingDue); zero before either.
	// bookkeepEvery is the host's own period (bookkeepingPeriod).
	bookkeptAt    time.Time
	bookkeepEvery time.Duration
	rev           uint64 // KV revision this state was loaded from or saved as
	// savedSum is the hash of the bytes last saved or loaded: the same
	// bytes are not written again. savedSubstance is substanceSum of that
	// state.
	savedSum, savedSubstance uint64
	// unanswered is the last write whose answer was lost (a timeout): it
	// may have landed, and then the key's newer revision is this engine's
	// own, not another engine's (store.go, adoptOwnWrite).
	unanswered []byte
	evalAt     time.Time
}

type capacityFacts struct {
	pools    []zfs.PoolList
	datasets []zfs.Dataset
}

// leafRef is one leaf vdev as the join needs it.
type leafRef struct {
	Pool   string `json:"pool"`
	Top    string `json:"top"`
	Name   string `json:"name"`
	Path   string `json:"path,omitempty"`
	GUID   string `json:"guid,omitempty"`
	Was    string `json:"was,omitempty"`
	State  string `json:"state"`
	Serial string `json:"serial,omitempty"`
	// Margin of the top-level vdev, when it has one.
	Margin    int  `json:"margin,omitempty"`
	HasMargin bool `json:"has_margin,omitempty"`
	// Resilvering: the top-level vdev is being resilvered.
	Resilvering bool `json:"resilvering,omitempty"`
}

// diskRef is the identity a SMART report gave a disk.
type diskRef struct {
	ID     disk.Identity `json:"id"`
	Device string        `json:"device"`
	Seen   time.Time     `json:"seen"`
	// legacyCRC is what SmartCRC remembered here up to 41d2458 (crc,
	// crc_seen, crc_at); decodeHost moves it into that rule's memory.
	legacyCRC *crcLink
}

// UnmarshalJSON reads a disk's identity, and the CRC count that 41d2458
// kept beside it.
func (d *diskRef) UnmarshalJSON(data []byte) error {
	type plain diskRef
	var saved struct {
		plain
		CRC     uint64    `json:"crc"`
		CRCSeen bool      `json:"crc_seen"`
		CRCAt   time.Time `json:"crc_at"`
	}
	if err := json.Unmarshal(data, &saved); err != nil {
		return err
	}
	*d = diskRef(saved.plain)
	if saved.CRCSeen {
		d.legacyCRC = &crcLink{Count: saved.CRC, At: saved.CRCAt}
	}
	return nil
}

type collectorState struct {
	Interval time.Duration `json:"interval,omitempty"`
	Disabled string        `json:"disabled,omitempty"`
	LastSeen *time.Time    `json:"last_seen,omitempty"`
	// TimeoutStreak counts timeout/busy errors since the last success.
	TimeoutStreak int    `json:"timeout_streak,omitempty"`
	ErrKind       string `json:"err_kind,omitempty"`
	ErrMessage    string `json:"err_message,omitempty"`
	ErrCommand    string `json:"err_command,omitempty"`
	ErrFix        string `json:"err_fix,omitempty"`
}

// bookkeepingDue reports whether h's bookkeeping alone (touched) has
// waited its period for a write.
func (h *hostState) bookkeepingDue(now time.Time) bool {
	if !h.touched {
		return false
	}
	if h.bookkeptAt.IsZero() {
		h.bookkeptAt = now // loaded, not yet written here: counted from now
	}
	if h.bookkeepEvery == 0 {
		h.bookkeepEvery = bookkeepingPeriod(h.Host)
	}
	return now.Sub(h.bookkeptAt) >= h.bookkeepEvery
}

// Bookkeeping alone (when collectors were last heard from, which facts
// were applied: hostState.touched) is saved this long after the host was
// last written, or up to half of it more (each host at its own period:
// bookkeepingPeriod): at the default intervals a fact arrives every few
// seconds and changes nothing else, and each save rewrote the whole host
// state (19 KB with a few alerts firing), 7 MB an hour on a small box's
// disk and in JetStream's cache of the bucket's block. What a crash loses
// of it is at most one and a half of this of "last heard from", which no
// rule judges in less than several intervals (and ages are counted from
// the engine's start at the earliest). The runner saves its stream
// position at most as often (rules/runner).
const touchSaveEvery = time.Minute

// bookkeepingPeriod is touchSaveEvery and up to half of it more, fixed by
// the host's name. Hosts written or loaded together (a server's start, a
// backlog drained, a partition taken over) would otherwise all be due
// again in the same second: a burst of one write per host every minute,
// which kept a 3-node cluster on two cores busy for half a minute with
// 10,000 hosts (docs/benchmarks.md). With periods apart their writes
// spread out; longer, not shorter, so that a box writes no more often.
func bookkeepingPeriod(host string) time.Duration {
	f := fnv.New64a()
	_, _ = f.Write([]byte(host))
	return touchSaveEvery + time.Duration(f.Sum64()%uint64(touchSaveEvery/2))
}

func newHostState(host string) *hostState {
	return &hostState{
		Version: stateVersion, Host: host,
		Book:  pipeline.NewBook(),
		Disks: map[string]*diskRef{}, Collectors: map[string]*collectorState{}, smart: map[string]*smart.Report{},
	}
}

// fixMaps makes a state read from JSON usable.
func (h *hostState) fixMaps() {
	h.Book.FixMaps()
	if h.Disks == nil {
		h.Disks = map[string]*diskRef{}
	}
	if h.Collectors == nil {
		h.Collectors = map[string]*collectorState{}
	}
	if h.smart == nil {
		h.smart = map[string]*smart.Report{}
	}
}

// maxSeen bounds the payload hashes kept per host.
const maxSeen = 1024

// unchanged reports whether a payload with hash sum is the last one its
// source (the status, or one disk) sent.
func (h *hostState) unchanged(sum uint64) bool {
	src, ok := h.bySum[sum]
	return ok && h.last[src] == sum
}

// remember records sum as the last payload of source src.
func (h *hostState) remember(src string, sum uint64) {
	if h.last == nil || len(h.bySum) >= maxSeen {
		h.last, h.bySum = map[string]uint64{}, map[uint64]string{}
	}
	if old, ok := h.last[src]; ok {
		delete(h.bySum, old)
	}
	h.last[src], h.bySum[sum] = sum, src
}

// forget drops the last payload of source src: the next one is news
// whatever its bytes (the engine changed its reading of src since).
func (h *hostState) forget(src string) {
	if old, ok := h.last[src]; ok {
		delete(h.bySum, old)
		delete(h.last, src)
	}
}

func (h *hostState) collector(name string) *collectorState {
	c := h.Collectors[name]
	if c == nil {
		c = &collectorState{}
		h.Collectors[name] = c
	}
	return c
}
