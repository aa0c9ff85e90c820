// Package history keeps what a person wants to look back on, downsampled, in
// JetStream: each disk's SMART attributes, each pool's capacity and vdev
// error counters as raw points, then hourly and daily aggregates; scrub and
// resilver results and every alert's firing and resolved times as events.
// It reads the facts the collectors publish and needs no database of its own.
package history

import "time"

// Source kinds: a Source is "disk/<serial>" or "pool/<name>".
const (
	SourceDisk = "disk"
	SourcePool = "pool"
)

// Tiers of points, finest first.
const (
	TierRaw  = "raw"
	TierHour = "hour"
	TierDay  = "day"
)

// Series names of a disk source: the SMART attributes the rules use.
const (
	SeriesTemperature          = "temperature_c"
	SeriesReallocated          = "reallocated_sectors"   // ATA 5
	SeriesReportedUncorrect    = "reported_uncorrect"    // ATA 187
	SeriesCommandTimeout       = "command_timeout"       // ATA 188
	SeriesPending              = "pending_sectors"       // ATA 197
	SeriesOfflineUncorrectable = "offline_uncorrectable" // ATA 198
	SeriesUDMACRCErrors        = "udma_crc_errors"       // ATA 199
	SeriesPowerOnHours         = "power_on_hours"
	SeriesMediaErrors          = "nvme_media_errors"
	SeriesAvailableSpare       = "nvme_available_spare_percent"
	SeriesPercentageUsed       = "nvme_percentage_used"
)

// Series names of a pool source. Per-vdev counters are named
// VdevSeries(vdev, SeriesReadErrors) and so on.
const (
	SeriesCapacity      = "capacity_percent"
	SeriesAllocBytes    = "alloc_bytes"
	SeriesSizeBytes     = "size_bytes"
	SeriesFragmentation = "fragmentation_percent"
	// Pool totals over its leaf vdevs.
	SeriesReadErrors     = "read_errors"
	SeriesWriteErrors    = "write_errors"
	SeriesChecksumErrors = "checksum_errors"
)

// VdevSeries names one vdev's counter in a pool source: "vdev:<name>:<counter>".
// A vdev's counter is stored only while it is not zero: absent, with the
// pool's totals present, means 0.
func VdevSeries(vdev, counter string) string { return "vdev:" + vdev + ":" + counter }

// Result is one source's points over a time range, in columns the page's
// plots take as they are. Points come from the coarsest tier that covers
// each part of the range (daily, then hourly, then raw for the newest part),
// so a year's plot has a point a day and its last hours a point a sample.
type Result struct {
	Host   string    `json:"host"`
	Source string    `json:"source"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	// Times are each point's time in Unix seconds: a raw sample's time, an
	// aggregate's period start.
	Times []int64 `json:"t"`
	// Periods are each point's period in seconds: 0 raw, 3600, 86400.
	Periods []int32 `json:"period_s"`
	// Series by name; each column has one entry per point, nil where the
	// point has no value for that series.
	Series map[string]Column `json:"series"`
}

// Column is one series' values; for a raw point Min, Max and Mean are equal.
type Column struct {
	Min  []*float64 `json:"min"`
	Max  []*float64 `json:"max"`
	Mean []*float64 `json:"mean"`
}

// Event kinds.
const (
	EventScrub    = "scrub"
	EventResilver = "resilver"
	EventAlert    = "alert"
	// EventAction is a person's answer to an incident (zwatch ack).
	EventAction = "action"
)

// Event is one thing that happened once: a scrub or resilver that ended, an
// alert that fired or resolved.
type Event struct {
	Host string    `json:"host"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// Scan (scrub, resilver): the pool and how it ended.
	Pool          string     `json:"pool,omitempty"`
	State         string     `json:"state,omitempty"` // finished, canceled
	Start         *time.Time `json:"start,omitempty"`
	ExaminedBytes uint64     `json:"examined_bytes,omitempty"`
	RepairedBytes uint64     `json:"repaired_bytes,omitempty"`
	Errors        uint64     `json:"errors,omitempty"`
	// Alert: one alert of a notification as it went out.
	Alert       string `json:"alert,omitempty"`
	Severity    string `json:"severity,omitempty"`
	Status      string `json:"status,omitempty"` // firing, resolved
	Fingerprint string `json:"fingerprint,omitempty"`
	Summary     string `json:"summary,omitempty"`
	// Action: the incident answered (Status is the action).
	Incident string `json:"incident,omitempty"`
}
