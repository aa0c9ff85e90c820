// Package statusview reads, from the bus, what the status page, its JSON API
// and /metrics show: each host's pools with their vdev trees, its disks with
// their last SMART reading, its firing alerts and the recent notifications
// with their delivery state. It keeps nothing in memory between requests:
// every view is the facts stream's last message per subject, read on demand.
package statusview

import (
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/silence"
)

// HostSummary is one line of the fleet's host picker.
type HostSummary struct {
	Host          string     `json:"host"`
	LastHeartbeat *time.Time `json:"last_heartbeat,omitempty"`
	// Silent: no heartbeat for longer than rules.watcher.silent_after.
	Silent bool `json:"silent"`
	Pools  int  `json:"pools"`
	// PoolsNotOnline counts pools whose state is not ONLINE.
	PoolsNotOnline int `json:"pools_not_online"`
	// Firing counts the host's firing alerts; Worst is the highest severity
	// among them ("" when none fires); Silenced counts those of them a
	// silence keeps from being sent.
	Firing   int    `json:"firing"`
	Worst    string `json:"worst,omitempty"`
	Silenced int    `json:"silenced"`
}

// Host is everything the page shows about one host.
type Host struct {
	Host          string     `json:"host"`
	GeneratedAt   time.Time  `json:"generated_at"`
	LastHeartbeat *time.Time `json:"last_heartbeat,omitempty"`
	Silent        bool       `json:"silent"`
	Version       string     `json:"version,omitempty"`
	// Collectors is each collector's health from the last heartbeat: a
	// disabled family or a failing tool is a blind spot the page shows.
	Collectors map[string]facts.CollectorHealth `json:"collectors,omitempty"`
	Pools      []Pool                           `json:"pools"`
	Disks      []Disk                           `json:"disks"`
	ARC        *zfs.ARC                         `json:"arc,omitempty"`
	ARCAt      *time.Time                       `json:"arc_at,omitempty"`
	// Alerts are this host's firing (and pending) alerts, worst first;
	// one a silence keeps from being sent carries it in "silenced".
	Alerts []alert.Alert `json:"alerts"`
	// Silences are the silences pending or active, of every host: a
	// silence matches labels, and host is one of them.
	Silences []Silence `json:"silences"`
	// Recent are the last notifications about this host, newest first.
	Recent      []Notification        `json:"recent"`
	DeadLetters []delivery.DeadLetter `json:"dead_letters"`
}

// Pool is one pool: its last zpool status and zpool list, with what a person
// asks first (is it healthy, how full, how many more disks may fail, when
// was it last scrubbed).
type Pool struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	GUID   string `json:"guid,omitempty"`
	Status string `json:"status,omitempty"`
	Action string `json:"action,omitempty"`

	SizeBytes   uint64   `json:"size_bytes,omitempty"`
	AllocBytes  uint64   `json:"alloc_bytes,omitempty"`
	FreeBytes   uint64   `json:"free_bytes,omitempty"`
	CapacityPct float64  `json:"capacity_percent"`
	FragmentPct *float64 `json:"fragmentation_percent,omitempty"`
	ReadOnly    bool     `json:"readonly,omitempty"`

	// Margin is how many more disks the pool survives losing: the least
	// over its data, special, dedup and log vdevs (negative: data is lost).
	// MarginText says it in words ("can lose 1 more disk").
	Margin     *int   `json:"margin,omitempty"`
	MarginText string `json:"margin_text,omitempty"`

	Scan zfs.Scan `json:"scan"`
	// LastScrub is when the last scrub ended (nil: none recorded).
	LastScrub *time.Time `json:"last_scrub,omitempty"`

	DataErrors    int  `json:"data_errors"`
	ErrorsUnknown bool `json:"errors_unknown,omitempty"`
	// Vdevs is the vdev tree, depth first, each row with its depth.
	Vdevs []Vdev `json:"vdevs"`

	StatusAt   *time.Time `json:"status_at,omitempty"`
	CapacityAt *time.Time `json:"capacity_at,omitempty"`
}

// Vdev is one row of a pool's vdev tree.
type Vdev struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	State string `json:"state"`
	// Class is data, logs, cache, spares, special or dedup.
	Class string `json:"class"`
	Depth int    `json:"depth"`

	ReadErrors     uint64   `json:"read_errors"`
	WriteErrors    uint64   `json:"write_errors"`
	ChecksumErrors uint64   `json:"checksum_errors"`
	SlowIOs        *uint64  `json:"slow_ios,omitempty"`
	GUID           string   `json:"guid,omitempty"`
	Path           string   `json:"path,omitempty"`
	Was            string   `json:"was,omitempty"`
	Notes          []string `json:"notes,omitempty"`

	// A leaf's disk, when zwatch knows it: by-id name, serial and the bay
	// hint (where it is plugged in).
	Serial string `json:"serial,omitempty"`
	ByID   string `json:"by_id,omitempty"`
	Bay    string `json:"bay,omitempty"`
	// Problem marks the row to highlight: not ONLINE, errors, or a firing
	// alert about its disk.
	Problem bool `json:"problem"`
}

// Disk is one physical disk with its last SMART reading.
type Disk struct {
	Serial    string `json:"serial"`
	Model     string `json:"model,omitempty"`
	ByID      string `json:"by_id,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	Transport string `json:"transport,omitempty"`
	Bay       string `json:"bay,omitempty"`
	SizeBytes uint64 `json:"size_bytes,omitempty"`
	// Pool and Vdev place the disk in a pool ("" when it is in none).
	Pool string `json:"pool,omitempty"`
	Vdev string `json:"vdev,omitempty"`

	// Health is passed, failing, standby or unknown (no reading yet).
	Health       string  `json:"health"`
	TemperatureC *int    `json:"temperature_c,omitempty"`
	PowerOnHours *uint64 `json:"power_on_hours,omitempty"`
	// Attributes are the counters the rules watch, named as the history's
	// series are (history.SeriesPending...), present when the disk reports them.
	Attributes map[string]uint64 `json:"attributes,omitempty"`
	SmartAt    *time.Time        `json:"smart_at,omitempty"`
	// SmartType is smartctl's device type (sat, nvme, scsi), for metrics.
	SmartType string `json:"smart_type,omitempty"`
	Firmware  string `json:"firmware,omitempty"`
	// SMART is the last reading as smartctl reported it (nil: none yet),
	// for /metrics in smartctl_exporter's shape.
	SMART *smart.Report `json:"smart,omitempty"`
	// Problem: failing SMART health, or a firing alert about the disk.
	Problem bool `json:"problem"`
	// Alerts names the firing alerts about this disk.
	Alerts []string `json:"alerts,omitempty"`
}

// Delivery states of a notification.
const (
	Delivered = "delivered" // every channel it was for has taken it
	Queued    = "queued"    // some channel has not yet (retrying)
	Failed    = "failed"    // some channel gave up on it (a dead letter)
)

// Notification is one notification from the outbox with how its delivery went.
type Notification struct {
	alert.Notification
	Seq      uint64   `json:"seq"`
	Delivery string   `json:"delivery"`
	Pending  []string `json:"pending_channels,omitempty"`
	Dead     []string `json:"dead_channels,omitempty"`
}

// ChannelProgress is one channel's outbox: how far it has delivered and
// what waits for it.
type ChannelProgress struct {
	Channel string `json:"channel"`
	Type    string `json:"type"`
	// AckFloor: every notification up to this outbox sequence is done
	// (delivered, skipped by the channel's route, or dead-lettered).
	AckFloor uint64 `json:"ack_floor"`
	// Backlog: notifications not yet delivered (waiting or being retried).
	Backlog uint64 `json:"backlog"`
	// DeadLetters: notifications this channel gave up on, still kept.
	DeadLetters int `json:"dead_letters"`
}

// Silence is a silence pending or active (package silence), with its
// state and how many of the host's alerts it keeps from being sent now.
type Silence struct {
	silence.Silence
	State     silence.State `json:"state"`
	Silencing int           `json:"silencing"`
}
