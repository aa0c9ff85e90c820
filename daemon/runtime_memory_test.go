package daemon

import (
	"testing"

	"github.com/zwatch/zwatch/config"
)

func TestRuntimeMemoryFor(t *testing.T) {
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	cases := []struct {
		name  string
		role  string
		pprof bool
		limit int
		env   map[string]string
		want  runtimeMemory
	}{
		{name: "one box", role: config.RoleAll,
			want: runtimeMemory{gcPercent: gcPercentBox, memProfileRate: 0, noHugePages: true}},
		{name: "agent", role: config.RoleAgent,
			want: runtimeMemory{gcPercent: gcPercentBox, memProfileRate: 0, noHugePages: true}},
		{name: "fleet server", role: config.RoleServer,
			want: runtimeMemory{gcPercent: gcPercentServer, memProfileRate: 0}},
		{name: "heap profiles asked for", role: config.RoleAll, pprof: true,
			want: runtimeMemory{gcPercent: gcPercentBox, memProfileRate: -1, noHugePages: true}},
		{name: "the environment wins", role: config.RoleAll, limit: 64,
			env:  map[string]string{"GOGC": "100", "GODEBUG": "gctrace=1,memprofilerate=4096", "GOMEMLIMIT": "50MiB"},
			want: runtimeMemory{gcPercent: -1, memProfileRate: -1, limitIgnored: "50MiB", noHugePages: true}},
		{name: "memory.limit_mb", role: config.RoleAll, limit: 64,
			want: runtimeMemory{gcPercent: gcPercentBox, memProfileRate: 0, limitBytes: 64 << 20, noHugePages: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Role = c.role
			cfg.HTTP.Pprof = c.pprof
			cfg.Memory.LimitMB = c.limit
			if got := runtimeMemoryFor(&cfg, env(c.env)); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
