package bus

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"
)

// What the embedded JetStream store may hold. JetStream reserves each
// stream's MaxBytes when the stream is created and refuses a stream (and,
// once full, every write) beyond its max_file_store; these sums set that
// limit, so the store can never grow past it and fill the disk. A new
// stream of the embedded bus must add its MaxBytes to StoreLimit.
const (
	// AlertsMaxBytes bounds the alerts stream (the outbox).
	AlertsMaxBytes = 256 << 20
	// DeadLetterMaxBytes bounds the dead-letter stream (notifiers).
	DeadLetterMaxBytes = 64 << 20
	// bucketsBytes is room for what JetStream does not reserve: the state
	// bucket, consumer state and the stores' indexes.
	bucketsBytes = 64 << 20
	// defaultFactsBytes is the facts stream's bound when none is given
	// (config's bus.facts_max_mb is the same). Below 32 MiB JetStream
	// writes the stream in 4 MiB blocks instead of 8 MiB ones, and it keeps
	// the block being written in memory: the facts stream is written on
	// every poll, so that block's size is resident memory
	// (docs/benchmarks.md, "Footprint with real pools, after incidents").
	defaultFactsBytes = 24 << 20
)

// errCodeStorageExceeded is JetStream's "insufficient storage resources
// available" (10047): no retry heals it.
const errCodeStorageExceeded jetstream.ErrorCode = 10047

// StoreSpace reports the space of dir's filesystem: free is what an
// unprivileged writer may still use, total its size, both in bytes.
func StoreSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	// Bavail is signed on some systems (negative when root's reserve is in use).
	return uint64(max(st.Bavail, 0)) * uint64(st.Bsize), uint64(st.Blocks) * uint64(st.Bsize), nil
}

// statfsFunc is StoreSpace, injectable for tests.
type statfsFunc func(dir string) (free, total uint64, err error)

// StoreSizes are the bounds of what the embedded store holds: each
// stream's MaxBytes and room for the buckets. Their sum is the server's
// max_file_store.
type StoreSizes struct {
	Facts, Alerts, DeadLetter, Buckets int64
	// History is what the history's streams may hold together (0: none).
	History int64
}

// Total is the store limit: max_file_store.
func (z StoreSizes) Total() int64 { return z.Facts + z.Alerts + z.DeadLetter + z.Buckets + z.History }

// wantedSizes are the bounds o asks for.
func wantedSizes(o Options) StoreSizes {
	facts := o.FactsMaxBytes
	if facts <= 0 {
		facts = defaultFactsBytes
	}
	return StoreSizes{Facts: facts, Alerts: AlertsMaxBytes, DeadLetter: DeadLetterMaxBytes, Buckets: bucketsBytes, History: max(o.HistoryMaxBytes, 0)}
}

// smallestSizes are the floors a store shrunk to fit its filesystem keeps:
// still hours of facts and thousands of notifications.
var smallestSizes = StoreSizes{Facts: 8 << 20, Alerts: 16 << 20, DeadLetter: 4 << 20, Buckets: 16 << 20}

// smallestHistory is the history's floor when it is on: a few months.
const smallestHistory = 4 << 20

// StoreLimit is the embedded store's max_file_store for o when its
// filesystem has room: the streams' MaxBytes (facts, alerts, dead letters)
// plus room for the buckets.
func StoreLimit(o Options) int64 { return wantedSizes(o).Total() }

// fitStore sizes the store to its filesystem: the store at its limit must
// leave a quarter of the space it can use (free plus what it holds already)
// to the rest of the system. With less room than o asks for, every bound
// shrinks in proportion (shrunk is true), down to smallestSizes; below
// that the store is refused, in one line that says what is needed.
func fitStore(storeDir string, o Options, statfs statfsFunc) (z StoreSizes, shrunk bool, err error) {
	want := wantedSizes(o)
	free, total, err := statfs(storeDir)
	if err != nil {
		return want, false, fmt.Errorf("bus store %s: %w", storeDir, err)
	}
	used := uint64(dirBytes(storeDir))
	budget := int64((free + used) / 4 * 3)
	if budget >= want.Total() {
		return want, false, nil
	}
	floor := smallestSizes
	if want.History > 0 {
		floor.History = min(smallestHistory, want.History)
	}
	if budget < floor.Total() {
		need := uint64(floor.Total()) / 3 * 4
		return want, false, fmt.Errorf("bus store %s: %s free of %s (the store holds %s), needs at least %s free (smallest store %s + a quarter spare): free space there, or move state_dir to a larger filesystem",
			storeDir, mib(free), mib(total), mib(used), mib(need-min(need, used)), mib(uint64(floor.Total())))
	}
	// Each bound keeps its floor, and the rest of the budget is shared in
	// proportion to what each wanted beyond it.
	excess := func(w, f int64) int64 { return max(w-f, 0) }
	wanted := excess(want.Facts, floor.Facts) + excess(want.Alerts, floor.Alerts) +
		excess(want.DeadLetter, floor.DeadLetter) + excess(want.Buckets, floor.Buckets) + excess(want.History, floor.History)
	share := float64(budget-floor.Total()) / float64(wanted)
	scale := func(w, f int64) int64 { return f + int64(float64(excess(w, f))*share) }
	z = StoreSizes{Facts: scale(want.Facts, floor.Facts), Alerts: scale(want.Alerts, floor.Alerts),
		DeadLetter: scale(want.DeadLetter, floor.DeadLetter), Buckets: scale(want.Buckets, floor.Buckets),
		History: scale(want.History, floor.History)}
	return z, true, nil
}

// dirBytes is the size of the files under dir (0 when it does not exist).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file that went away, or an unreadable one: not counted
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func mib(b uint64) string {
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
