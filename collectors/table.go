package collectors

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/execx"
)

// Spec is one line of the collector table: how to build a collector, how
// often it runs and what it needs.
type Spec struct {
	// Name is the collector's name; it equals what the built collector's
	// Name returns, and is what followers poke.
	Name string
	// Family is the config switch and the tool it shares with its siblings;
	// the zero Family needs neither.
	Family Family
	// Enabled reads the collector's own switch within its family
	// (zfs.follow_events); nil means always on.
	Enabled func(*config.Config) bool
	// Platforms are the runtime.GOOS values it runs on; none means any.
	Platforms []string
	// Every reads its poll interval from the config (Poll only), for the
	// built-in collectors whose keys sit under zfs:, smart: and disks:.
	Every func(*config.Config) time.Duration
	// Interval is, for a collector without Every, its default poll
	// interval, which collectors.<Name>.interval overrides; MinInterval
	// the shortest that key accepts (1s when 0).
	Interval, MinInterval time.Duration
	// Poll builds a collector run every Every. Exactly one of Poll and
	// Follow is set.
	Poll func(Env) Collector
	// Follow builds a follower: a stream read as it comes.
	Follow func(Env) Follower
}

// Period is how often the collector polls under cfg.
func (s Spec) Period(cfg *config.Config) time.Duration {
	if s.Every != nil {
		return s.Every(cfg)
	}
	return cfg.CollectorInterval(s.Name, s.Interval)
}

// Keys are the table's collectors with keys of their own, for config
// (config.Catalog.Collectors).
func Keys(table []Spec) []config.CollectorInfo {
	var out []config.CollectorInfo
	for _, s := range table {
		if s.Every == nil && s.Poll != nil {
			out = append(out, config.CollectorInfo{Name: s.Name, Interval: s.Interval, Minimum: s.MinInterval})
		}
	}
	return out
}

// Family is a group of collectors that one config switch turns off and one
// tool makes possible. Either is said once for the whole family: one log
// line, and for a missing tool one heartbeat blind spot, not one per
// collector.
type Family struct {
	// Name is the family in log lines: "ZFS" monitoring.
	Name string
	// BlindSpot is the heartbeat's name for the family when its tool is
	// missing: "zfs".
	BlindSpot string
	// Switch is the config key Enabled reads, for the log line.
	Switch  string
	Enabled func(*config.Config) bool
	// Tool reads the configured name or path of the program it needs.
	Tool func(*config.Config) string
	// Install says how to get the tool when it is missing.
	Install string
}

// Env is what a collector is built from.
type Env struct {
	Config *config.Config
	// Runner runs the ZFS tools with zfs.command_timeout. One runner for
	// all collectors keeps a hung zpool at one outstanding process per argv.
	Runner Runner
	// Log is the daemon's logger, with the collector's name.
	Log *slog.Logger
	// Poke returns a function that asks the named poll collector for a run
	// now instead of at its next interval; a follower calls it on news.
	Poke func(collector string) func()
	// Urgent returns a function that asks the named TargetCollector to read
	// one target now ("smart", "/dev/sdb"); the daemon queues the requests
	// and the collector decides how often it honours them. Never nil in the
	// daemon; a collector built without it (tests) must check.
	Urgent func(collector string) func(target string)
}

// Table lists every collector, in the order the daemon starts them. Adding
// a collector is one file in this package and one line here.
func Table() []Spec {
	// The platforms whose zpool and smartctl zwatch reads.
	unix := []string{"linux", "freebsd"}
	zfsFamily := Family{
		Name: "ZFS", BlindSpot: "zfs", Switch: "zfs.enabled",
		Enabled: func(c *config.Config) bool { return c.ZFS.Enabled },
		Tool:    func(c *config.Config) string { return c.ZFS.Zpool },
		Install: "install zfsutils-linux, or set zfs.zpool to its path",
	}
	smartFamily := Family{
		Name: "SMART", BlindSpot: "smart", Switch: "smart.enabled",
		Enabled: func(c *config.Config) bool { return c.Smart.Enabled },
		Tool:    func(c *config.Config) string { return c.Smart.Smartctl },
		Install: "install smartmontools, or set smart.smartctl to its path",
	}
	return []Spec{
		{Name: "zpool_list", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.ListInterval.D() },
			Poll: func(e Env) Collector {
				return &ZpoolList{Runner: e.Runner, Zpool: e.Config.ZFS.Zpool, Zfs: e.Config.ZFS.Zfs,
					Hang:         &HangProbe{Kstat: e.Poke("pool_kstat"), Retry: e.Poke("zpool_list")},
					PoolsChanged: poolsChanged(e, recheckAfterPoolChange)}
			}},
		{Name: "zpool_status", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.StatusInterval.D() },
			Poll: func(e Env) Collector {
				return &ZpoolStatus{Runner: e.Runner, Zpool: e.Config.ZFS.Zpool, Log: e.Log, Urgent: urgentSmart(e),
					Hang: &HangProbe{Kstat: e.Poke("pool_kstat"), Retry: e.Poke("zpool_status"), Cheap: e.Poke("zpool_list")}}
			}},
		// The kernel's pool state, which answers while zpool hangs: every
		// list interval, and at once when a zpool command times out.
		{Name: "pool_kstat", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.ListInterval.D() },
			Poll: func(e Env) Collector {
				if runtime.GOOS == "freebsd" {
					return &PoolKstat{Sysctl: "sysctl", Runner: e.Runner}
				}
				return &PoolKstat{Root: KstatDir}
			}},
		{Name: "arc", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.ARCInterval.D() },
			Poll:  func(e Env) Collector { return &ARC{Runner: e.Runner} }},
		{Name: "zpool_events", Family: zfsFamily, Platforms: unix,
			Enabled: func(c *config.Config) bool { return c.ZFS.FollowEvents },
			Follow: func(e Env) Follower {
				return &EventFollower{Zpool: e.Config.ZFS.Zpool, Debounce: 200 * time.Millisecond, Log: e.Log,
					// The status poll pages; the list poll can wait for the burst to end.
					Poke: e.Poke("zpool_status"), Settled: e.Poke("zpool_list"), PoolChanged: poolsChanged(e, recheckAfterPoolChange),
					Urgent: urgentSmart(e)}
			}},
		{Name: "datasets", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.DatasetsInterval.D() },
			Poll:  func(e Env) Collector { return &Datasets{Runner: e.Runner, Zfs: e.Config.ZFS.Zfs} }},
		{Name: "snapshots", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.SnapshotsInterval.D() },
			// Its own runner: a listing of many snapshots is slow, not hung
			// (1,082 took 19-25 s on the test VM, kbulk), so it gets half
			// its interval when that is longer than zfs.command_timeout.
			Poll: func(e Env) Collector {
				timeout := max(e.Config.ZFS.CommandTimeout.D(), e.Config.ZFS.SnapshotsInterval.D()/2)
				return &Snapshots{Runner: execx.New(timeout), Zfs: e.Config.ZFS.Zfs}
			}},
		// zpool import reads every disk's labels: it decides itself when to scan.
		{Name: "zpool_import", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.ImportInterval.D() },
			Poll: func(e Env) Collector {
				return &ZpoolImport{Runner: e.Runner, Zpool: e.Config.ZFS.Zpool, CacheFile: e.Config.ZFS.CacheFile}
			}},
		{Name: SmartCollectorName, Family: smartFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.Smart.Interval.D() },
			// Its own runner, with smart.timeout per call.
			Poll: func(e Env) Collector { return NewSmartCollector(SmartConfigFrom(e.Config), nil) }},
		// Issue 16, disks: the disks present, and the ZFS userland against its module.
		{Name: "disks", Platforms: []string{"linux"},
			Every: func(c *config.Config) time.Duration { return c.Disks.Interval.D() },
			Poll:  func(e Env) Collector { return &Disks{Root: "/"} }},
		{Name: "zfs_version", Family: zfsFamily, Platforms: unix,
			Every: func(c *config.Config) time.Duration { return c.ZFS.VersionInterval.D() },
			Poll: func(e Env) Collector {
				module := ZFSModuleVersionFile
				if runtime.GOOS == "freebsd" {
					module = "" // the module's version is zfs version's to say there
				}
				return &ZFSVersion{Runner: e.Runner, Zfs: e.Config.ZFS.Zfs, ModuleFile: module}
			}},
		// The kernel log: no tool and no family, its own switch; Linux only.
		{Name: KernelLogName, Platforms: []string{"linux"},
			Enabled: func(c *config.Config) bool { return c.Kernel.Enabled },
			Follow:  func(e Env) Follower { return NewKernelLog(e) }},
	}
}

// recheckAfterPoolChange is when the datasets are read a second time after
// a pool came or went: zpool import mounts the datasets after its event,
// and the first poll may see them still unmounted (seen in make e2e).
const recheckAfterPoolChange = 30 * time.Second

// poolsChanged is what a pool imported, exported, created or destroyed
// pokes: the datasets (now, and again after recheck) and what zpool import
// finds.
func poolsChanged(e Env, recheck time.Duration) func() {
	datasets, imports := e.Poke("datasets"), e.Poke("zpool_import")
	return func() {
		datasets()
		imports()
		time.AfterFunc(recheck, datasets)
	}
}
