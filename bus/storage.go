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
	// defaultFactsBytes is the facts stream's bound when none is given.
	defaultFactsBytes = 64 << 20
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

// StoreLimit is the embedded store's max_file_store for o: the streams'
// MaxBytes (facts, alerts, dead letters) plus room for the buckets.
func StoreLimit(o Options) int64 {
	facts := o.FactsMaxBytes
	if facts <= 0 {
		facts = defaultFactsBytes
	}
	return facts + AlertsMaxBytes + DeadLetterMaxBytes + bucketsBytes
}

// checkStoreSpace refuses a store that could fill its filesystem: the
// store at its limit must leave a quarter of the space it can use (free
// plus what it holds already) free for the rest of the system.
func checkStoreSpace(storeDir string, limit int64, statfs statfsFunc) error {
	free, total, err := statfs(storeDir)
	if err != nil {
		return fmt.Errorf("bus store %s: %w", storeDir, err)
	}
	used := dirBytes(storeDir)
	usable := free + uint64(used)
	need := uint64(limit) / 3 * 4
	if usable >= need {
		return nil
	}
	return fmt.Errorf("bus store %s: %s free of %s (the store holds %s), needs %s free (store limit %s + a quarter spare): free space there, move state_dir to a larger filesystem, or lower bus.facts_max_mb",
		storeDir, mib(free), mib(total), mib(uint64(used)), mib(need-uint64(used)), mib(uint64(limit)))
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
