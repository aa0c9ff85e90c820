package config

import "time"

// MemoryConfig keeps the daemon's footprint small on a small box, also
// after incidents (docs/benchmarks.md, "Footprint after incidents").
type MemoryConfig struct {
	// LimitMB is the Go runtime's soft memory limit in MiB
	// (debug.SetMemoryLimit): past it the garbage collector works harder
	// before the heap grows further. 0 leaves the runtime's default (none).
	LimitMB int `yaml:"limit_mb"`
	// SettleAfter: once the resident memory has grown and then stayed flat
	// this long (an incident or a page view is over), freed heap goes back
	// to the operating system and the binary's code pages are dropped from
	// the resident set again. 0 turns it off.
	SettleAfter Duration `yaml:"settle_after"`
}

// DefaultMemory: no limit and no settling unless configured. Both are opt-in
// until they are measured in the real-pool guest: with limit_mb 64 and
// settle_after 2m, make e2e's status page answered 3 to 5 times slower and a
// pulled disk paged in 14 s instead of 5.6 (docs/benchmarks.md, "Footprint
// after incidents").
func DefaultMemory() MemoryConfig {
	return MemoryConfig{}
}

func (m *MemoryConfig) validate(errs *Errors) {
	if m.LimitMB != 0 && (m.LimitMB < 32 || m.LimitMB > 1<<20) {
		errs.add("memory.limit_mb", m.LimitMB, "must be 0 (no limit) or 32 to 1048576 (MiB); below 32 the collector would run almost without pause")
	}
	if d := m.SettleAfter.D(); d != 0 && (d < 30*time.Second || d > 24*time.Hour) {
		errs.add("memory.settle_after", FormatDuration(d), "must be 0 (off) or 30s to 24h")
	}
}
