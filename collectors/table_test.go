package collectors

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/execx"
)

// Every line of the table builds what it says: one kind of collector, under
// its own name, with an interval from the config, poking only collectors
// that are polled.
func TestTableLinesAreWhole(t *testing.T) {
	cfg := config.Default()
	var poked []string
	env := Env{Config: &cfg, Runner: execx.New(0), Log: discard(),
		Poke: func(name string) func() { poked = append(poked, name); return func() {} }}
	polled := map[string]bool{}
	seen := map[string]bool{}
	for _, s := range Table() {
		if s.Name == "" || seen[s.Name] {
			t.Fatalf("collector name %q is empty or listed twice", s.Name)
		}
		seen[s.Name] = true
		if (s.Poll == nil) == (s.Follow == nil) {
			t.Errorf("%s: set exactly one of Poll and Follow", s.Name)
			continue
		}
		if f := s.Family; f.Name != "" && (f.Enabled == nil || f.Tool == nil || f.BlindSpot == "" || f.Switch == "" || f.Install == "") {
			t.Errorf("%s: family %+v is not filled in", s.Name, f)
		}
		for _, p := range s.Platforms {
			if !slices.Contains([]string{"linux", "freebsd"}, p) {
				t.Errorf("%s: platform %q", s.Name, p)
			}
		}
		var name string
		if s.Poll != nil {
			polled[s.Name] = true
			if s.Period(&cfg) <= 0 {
				t.Errorf("%s: no interval from the default config: set Every (a built-in key) or Interval (collectors.%s.interval)", s.Name, s.Name)
			}
			if s.Every != nil && s.Interval != 0 {
				t.Errorf("%s: set Every or Interval, not both", s.Name)
			}
			name = s.Poll(env).Name()
		} else {
			name = s.Follow(env).Name()
		}
		if name != s.Name {
			t.Errorf("table line %s builds a collector named %s", s.Name, name)
		}
	}
	if len(poked) == 0 {
		t.Error("no follower pokes a poll: the zpool events follower should")
	}
	for _, p := range poked {
		if !polled[p] {
			t.Errorf("a follower pokes %q, which is not a polled collector in the table", p)
		}
	}
}

// The ZFS collectors share one switch and one tool, so that a missing zpool
// is one blind spot.
func TestTableFamilies(t *testing.T) {
	cfg := config.Default()
	cfg.ZFS.Zpool, cfg.Smart.Smartctl = "/opt/zpool", "/opt/smartctl"
	byFamily := map[string][]string{}
	for _, s := range Table() {
		if s.Family.Name != "" {
			byFamily[s.Family.BlindSpot] = append(byFamily[s.Family.BlindSpot], s.Name)
			switch s.Family.BlindSpot {
			case "zfs":
				if s.Family.Tool(&cfg) != "/opt/zpool" {
					t.Errorf("%s needs %s", s.Name, s.Family.Tool(&cfg))
				}
			case "smart":
				if s.Family.Tool(&cfg) != "/opt/smartctl" {
					t.Errorf("%s needs %s", s.Name, s.Family.Tool(&cfg))
				}
			}
		}
	}
	if want := []string{"zpool_list", "zpool_status", "pool_kstat", "arc", "zpool_events", "datasets", "snapshots", "zpool_import", "zfs_version"}; !slices.Equal(byFamily["zfs"], want) {
		t.Errorf("ZFS family %v, want %v", byFamily["zfs"], want)
	}
	if want := []string{SmartCollectorName}; !slices.Equal(byFamily["smart"], want) {
		t.Errorf("SMART family %v, want %v", byFamily["smart"], want)
	}
}

// A pool coming or going polls the datasets at once and once more a little
// later (the mounts of zpool import follow its event), and zpool import once.
func TestPoolsChangedPokesDatasetsTwice(t *testing.T) {
	var mu sync.Mutex
	pokes := map[string]int{}
	env := Env{Poke: func(name string) func() {
		return func() { mu.Lock(); pokes[name]++; mu.Unlock() }
	}}
	poolsChanged(env, 50*time.Millisecond)()
	mu.Lock()
	if pokes["datasets"] != 1 || pokes["zpool_import"] != 1 {
		t.Fatalf("at once: %v", pokes)
	}
	mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if pokes["datasets"] != 2 || pokes["zpool_import"] != 1 {
		t.Fatalf("after the recheck: %v", pokes)
	}
}
