package daemon

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/zwatch/zwatch/config"
)

// gcPercent is `zwatch run`'s GOGC: a collection when the heap has grown
// by half since the last one, not doubled (Go's 100): the heap's headroom
// is resident memory. GOGC 25 saved another 1-1.6 MB after incidents on
// the stand-ins, but cost 17 % more CPU (2.5 times the collections, 6 ms
// each), and CPU is the tighter budget with real pools (docs/benchmarks.md,
// "The Go runtime's share, and what fault-around adds").
const gcPercent = 50

// runtimeMemory is what ApplyRuntimeMemory sets, field by field.
type runtimeMemory struct {
	gcPercent      int   // debug.SetGCPercent; -1: GOGC is set
	memProfileRate int   // runtime.MemProfileRate; -1: left as is
	limitBytes     int64 // debug.SetMemoryLimit; 0: none
	limitIgnored   string
	noHugePages    bool // disableHugePages
}

// runtimeMemoryFor derives the settings from the config and the
// environment, which wins as the runtime documents (GOGC, GOMEMLIMIT,
// GODEBUG=memprofilerate).
func runtimeMemoryFor(cfg *config.Config, getenv func(string) string) runtimeMemory {
	r := runtimeMemory{gcPercent: gcPercent, memProfileRate: -1, noHugePages: true}
	if cfg.Role == config.RoleServer {
		// A large heap gains from huge pages, and uses most of each.
		r.noHugePages = false
	}
	if getenv("GOGC") != "" {
		r.gcPercent = -1
	}
	// Go samples an allocation every 512 KiB for heap profiles and keeps
	// a 1.4 MB hash table of the sampled call stacks, about 1 MB of it
	// resident once the daemon has run a while. Only /debug/pprof/heap
	// (http.pprof) reads those samples.
	if !cfg.HTTP.Pprof && !strings.Contains(getenv("GODEBUG"), "memprofilerate=") {
		r.memProfileRate = 0
	}
	if mb := cfg.Memory.LimitMB; mb > 0 {
		if v := getenv("GOMEMLIMIT"); v != "" {
			r.limitIgnored = v
		} else {
			r.limitBytes = int64(mb) << 20
		}
	}
	return r
}

// ApplyRuntimeMemory sets the Go runtime's collector target, its heap
// profiling and its soft memory limit (memory.limit_mb), and turns
// transparent huge pages off for a box's own daemon, for `zwatch run`.
// All are process-wide, so the command sets them, not Run: tests and
// simulations run many daemons in one process.
func ApplyRuntimeMemory(cfg *config.Config, getenv func(string) string, log *slog.Logger) {
	r := runtimeMemoryFor(cfg, getenv)
	if r.noHugePages {
		if err := disableHugePages(); err != nil {
			log.Debug("transparent huge pages stay on", "err", err)
		}
	}
	if r.gcPercent > 0 {
		debug.SetGCPercent(r.gcPercent)
	}
	if r.memProfileRate >= 0 {
		runtime.MemProfileRate = r.memProfileRate
	}
	if r.limitIgnored != "" {
		log.Info("GOMEMLIMIT is set: memory.limit_mb left aside", "GOMEMLIMIT", r.limitIgnored)
	}
	if r.limitBytes > 0 {
		debug.SetMemoryLimit(r.limitBytes)
	}
}
