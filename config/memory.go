package config

import "time"

// MemoryConfig keeps the daemon's footprint small on a small box, also
// after incidents (docs/benchmarks.md, "Idle footprint" and "Soak").
type MemoryConfig struct {
	// LimitMB is the Go runtime's soft memory limit in MiB
	// (debug.SetMemoryLimit): past it the garbage collector works harder
	// before the heap grows further. 0 leaves the runtime's default (none);
	// unset, it is DefaultLimitMB, or none on a fleet server (Limit).
	LimitMB *int `yaml:"limit_mb"`
	// SettleAfter: once the resident memory has grown and then stayed flat
	// this long (an incident or a page view is over), freed heap goes back
	// to the operating system and the binary's code pages are dropped from
	// the resident set again. 0 turns it off.
	SettleAfter Duration `yaml:"settle_after"`
}

// DefaultLimitMB suits a 2 GB NAS running zwatch alone (role all) or an
// agent: the heap of one machine's monitoring is ~10 MB, so 64 MiB is only
// reached by a burst.
const DefaultLimitMB = 64

// DefaultMemory: the limit by role (Limit), settling 2 minutes after growth.
func DefaultMemory() MemoryConfig {
	return MemoryConfig{SettleAfter: Duration(2 * time.Minute)}
}

// Limit is the soft memory limit in MiB for a process of role, 0 for none.
// Unset, a fleet server has none: its heap grows with the hosts it holds,
// and a limit sized for one NAS would keep its collector running.
func (m MemoryConfig) Limit(role string) int {
	switch {
	case m.LimitMB != nil:
		return *m.LimitMB
	case role == RoleServer:
		return 0
	default:
		return DefaultLimitMB
	}
}

func (m *MemoryConfig) validate(errs *Errors) {
	if m.LimitMB != nil && *m.LimitMB != 0 && (*m.LimitMB < 32 || *m.LimitMB > 1<<20) {
		errs.add("memory.limit_mb", *m.LimitMB, "must be 0 (no limit) or 32 to 1048576 (MiB); below 32 the collector would run almost without pause")
	}
	if d := m.SettleAfter.D(); d != 0 && (d < 30*time.Second || d > 24*time.Hour) {
		errs.add("memory.settle_after", FormatDuration(d), "must be 0 (off) or 30s to 24h")
	}
}
