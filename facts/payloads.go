package facts

import (
	"time"

	"github.com/zwatch/zwatch/zfs"
)

// The payloads of the facts collectors publish. Each is versioned by its
// envelope schema (bus.Schema(kind)); fields are only ever added. SMART
// reports travel as smart.Report and ARC readings as zfs.ARC.

// StatusData is the payload of zwatch.v1.<host>.zpool.status.
type StatusData struct {
	// Source says which parser read it: "json" (zpool status -j) or "text".
	Source string      `json:"source"`
	Pools  []*zfs.Pool `json:"pools"`
}

// CapacityData is the payload of zwatch.v1.<host>.zpool.capacity.
type CapacityData struct {
	Pools    []zfs.PoolList `json:"pools"`
	Datasets []zfs.Dataset  `json:"datasets,omitempty"`
}

// EventData is the payload of zwatch.v1.<host>.zpool.event.
type EventData struct {
	zfs.Event
}

// PoolKstatData is the payload of zwatch.v1.<host>.zpool.kstat: the state
// of each imported pool read from the kernel's kstat, which never waits on
// the pool (/proc/spl/kstat/zfs/<pool>/state on Linux, sysctl
// kstat.zfs.<pool>.misc.state on FreeBSD). It is the one reading that still
// answers while zpool commands hang on a SUSPENDED pool.
type PoolKstatData struct {
	// Source is where it was read: "procfs" or "sysctl".
	Source string      `json:"source"`
	Pools  []PoolKstat `json:"pools"`
}

// PoolKstat is one pool's kernel state: ONLINE, DEGRADED, FAULTED,
// OFFLINE, REMOVED, UNAVAIL, SPLIT, SUSPENDED or TRANSITIONING (OpenZFS
// spa_state_to_name).
type PoolKstat struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Heartbeat is the payload of zwatch.v1.<host>.heartbeat: proof of life
// and the freshness of each collector, for the "watcher itself" rules.
type Heartbeat struct {
	Version    string                     `json:"version"`
	Started    time.Time                  `json:"started"`
	Collectors map[string]CollectorHealth `json:"collectors"`
}

// CollectorHealth is one collector's recent history.
type CollectorHealth struct {
	Interval  time.Duration `json:"interval_ns"`
	LastOK    *time.Time    `json:"last_ok,omitempty"`
	LastError string        `json:"last_error,omitempty"`
	// Disabled says why a collector does not run here (zpool missing...).
	Disabled string `json:"disabled,omitempty"`
}

// CollectorError is the payload of zwatch.v1.<host>.collector.error.
type CollectorError struct {
	Collector string `json:"collector"`
	// Kind: timeout, busy, missing, denied, failed, parse.
	Kind    string `json:"kind"`
	Command string `json:"command,omitempty"`
	// Target names the pool or disk concerned, when there is one.
	Target  string `json:"target,omitempty"`
	Message string `json:"message"`
	// Fix tells a person what to do about it.
	Fix string `json:"fix,omitempty"`
}

// KindParse is the collector.error kind for output that could not be read.
const KindParse = "parse"
