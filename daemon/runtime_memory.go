package daemon

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/zwatch/zwatch/config"
)

// GOGC of `zwatch run`. The heap's headroom is resident memory: a box's
// own daemon (role all or agent) collects when its heap has grown by a
// quarter, 1-2 MB less after incidents than at 50. That became affordable
// once an idle daemon made a third less garbage (the parsers' buffers, the
// rule state read for every snapshot): side by side, GOGC 25 used 8 % more
// CPU than the build before at 50, where it had cost 17 %. A fleet server
// holds every host's state and takes their facts at a rate, so it keeps 50
// (docs/benchmarks.md, "Idle garbage, continued").
const (
	gcPercentBox    = 25
	gcPercentServer = 50
)

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
	r := runtimeMemory{gcPercent: gcPercentBox, memProfileRate: -1, noHugePages: true}
	if cfg.Role == config.RoleServer {
		// A large heap gains from huge pages, and uses most of each.
		r.gcPercent, r.noHugePages = gcPercentServer, false
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
