// Package zfs is zwatch's shared model of ZFS state — pools, vdevs, scans,
// capacity, events and ARC statistics — and the parsers that read it from the
// output of OpenZFS tools. Collectors, rules, the replacement guide and
// provisioning all speak these types.
package zfs

import "time"

// Pool states as printed by zpool(8). Spares use AVAIL/INUSE in the state column.
const (
	StateOnline    = "ONLINE"
	StateDegraded  = "DEGRADED"
	StateFaulted   = "FAULTED"
	StateOffline   = "OFFLINE"
	StateRemoved   = "REMOVED"
	StateUnavail   = "UNAVAIL"
	StateSuspended = "SUSPENDED"
	StateAvail     = "AVAIL"
	StateInUse     = "INUSE"
)

// Vdev types. Leaves are "disk" or "file"; interior vdevs carry their layout.
const (
	VdevRoot      = "root"
	VdevMirror    = "mirror"
	VdevRaidz     = "raidz" // Parity says 1, 2 or 3
	VdevDraid     = "draid" // Parity, DraidData, DraidSpares describe it
	VdevDisk      = "disk"
	VdevFile      = "file"
	VdevReplacing = "replacing"
	VdevSpare     = "spare"    // spare-N interior vdev while a hot spare is in use
	VdevDSpare    = "dspare"   // dRAID distributed spare (draid2-0-0)
	VdevIndirect  = "indirect" // a removed top-level vdev
	VdevHole      = "hole"
	VdevUnknown   = "unknown"
)

// Scan functions and states (pool_scan_func_t / dsl_scan_state_t).
const (
	ScanNone       = "none"
	ScanScrub      = "scrub"
	ScanResilver   = "resilver"
	ScanErrorScrub = "errorscrub"

	ScanStateNone     = "none"
	ScanStateScanning = "scanning"
	ScanStateFinished = "finished"
	ScanStateCanceled = "canceled"
	ScanStatePaused   = "paused"
)

// Pool is one pool as `zpool status` describes it.
type Pool struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	GUID   string `json:"guid,omitempty"`
	Status string `json:"status"`
	Action string `json:"action"`
	MsgID  string `json:"msgid"`
	See    string `json:"see,omitempty"`
	Scan   Scan   `json:"scan"`
	// Remove and Checkpoint keep the text of the `remove:` and `checkpoint:` sections.
	Remove     string `json:"remove,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`

	// Root is the pool's own line of the config tree (the root vdev): its
	// pool-wide error counters and notes ("insufficient replicas"). Its
	// Children are left empty; the tree below it is in Vdevs and the classes.
	Root *Vdev `json:"root,omitempty"`
	// Vdevs are the top-level data vdevs; the other classes are listed apart
	// as zpool prints them.
	Vdevs   []*Vdev `json:"vdevs"`
	Logs    []*Vdev `json:"logs"`
	Cache   []*Vdev `json:"cache"`
	Spares  []*Vdev `json:"spares"`
	Special []*Vdev `json:"special"`
	Dedup   []*Vdev `json:"dedup"`

	DataErrors DataErrors `json:"data_errors"`
	// ErrorsUnknown is set when the input did not say how many data errors
	// the pool has: text without an `errors:` line (a pasted fragment, a
	// truncated output), "List of errors unavailable" (a suspended pool), or
	// JSON without error_count. DataErrors then means "not known", never
	// "none"; omitted (false) when the count is known.
	ErrorsUnknown bool `json:"errors_unknown,omitempty"`
	// Notes keeps lines or sections the parser did not recognise, so that a
	// new OpenZFS release degrades gracefully instead of failing the pool.
	Notes []string `json:"notes,omitempty"`
}

// DataErrors is the `errors:` section.
type DataErrors struct {
	Count int      `json:"count"`
	Files []string `json:"files"`
}

// Scan is the `scan:` line(s): the last or current scrub or resilver.
type Scan struct {
	Function      string     `json:"function"`
	State         string     `json:"state"`
	Start         *time.Time `json:"start,omitempty"`
	End           *time.Time `json:"end,omitempty"`
	ExaminedBytes uint64     `json:"examined_bytes,omitempty"`
	IssuedBytes   uint64     `json:"issued_bytes,omitempty"`
	TotalBytes    uint64     `json:"total_bytes,omitempty"`
	RepairedBytes uint64     `json:"repaired_bytes"`
	Errors        uint64     `json:"errors"`
	RateBytes     uint64     `json:"rate_bytes_per_second,omitempty"`
	PercentDone   float64    `json:"percent_done"`
	ETASeconds    int64      `json:"eta_seconds,omitempty"`
	// PausedSince is set while a scrub is paused.
	PausedSince *time.Time `json:"paused_since,omitempty"`
	// Approximate is true when byte counts were read from abbreviated text (1.2T).
	Approximate bool `json:"approximate,omitempty"`
	// Text is the scan section as printed, for people.
	Text string `json:"text,omitempty"`
}

// Vdev is any node of the vdev tree.
type Vdev struct {
	Name           string `json:"name"`
	Type           string `json:"type"`
	State          string `json:"state"`
	ReadErrors     uint64 `json:"read_errors"`
	WriteErrors    uint64 `json:"write_errors"`
	ChecksumErrors uint64 `json:"checksum_errors"`
	// ErrorsApproximate is true when counters were abbreviated (1.2K) because
	// the output was produced without -p.
	ErrorsApproximate bool    `json:"errors_approximate"`
	SlowIOs           *uint64 `json:"slow_ios,omitempty"`
	Path              string  `json:"path"`
	GUID              string  `json:"guid"`
	// Was is the last known path of a device that could not be opened.
	Was   string   `json:"was"`
	Notes []string `json:"notes"`
	// Parity is set for raidz and draid vdevs.
	Parity int `json:"parity,omitempty"`
	// DraidData and DraidSpares describe a dRAID layout (draid2:4d:8c:1s).
	DraidData   int     `json:"draid_data,omitempty"`
	DraidSpares int     `json:"draid_spares,omitempty"`
	Children    []*Vdev `json:"children"`
}

// IsLeaf reports whether v is a device (disk, file or distributed spare).
func (v *Vdev) IsLeaf() bool {
	return v.Type == VdevDisk || v.Type == VdevFile || v.Type == VdevDSpare
}

// Leaves returns every leaf below (or equal to) v, depth first.
func (v *Vdev) Leaves() []*Vdev {
	if v.IsLeaf() {
		return []*Vdev{v}
	}
	var out []*Vdev
	for _, c := range v.Children {
		out = append(out, c.Leaves()...)
	}
	return out
}

// AllVdevs returns the top-level vdevs of every class with the class name.
func (p *Pool) AllVdevs() []ClassVdev {
	var out []ClassVdev
	add := func(class string, vs []*Vdev) {
		for _, v := range vs {
			out = append(out, ClassVdev{Class: class, Vdev: v})
		}
	}
	add("data", p.Vdevs)
	add("special", p.Special)
	add("dedup", p.Dedup)
	add("logs", p.Logs)
	add("cache", p.Cache)
	add("spares", p.Spares)
	return out
}

// ClassVdev is a top-level vdev with its allocation class.
type ClassVdev struct {
	Class string
	Vdev  *Vdev
}

// PoolList is one line of `zpool list -Hp`.
type PoolList struct {
	Name        string   `json:"name"`
	Health      string   `json:"health"`
	SizeBytes   uint64   `json:"size_bytes,omitempty"`
	AllocBytes  uint64   `json:"alloc_bytes,omitempty"`
	FreeBytes   uint64   `json:"free_bytes,omitempty"`
	CapacityPct float64  `json:"capacity_percent"`
	FragmentPct *float64 `json:"fragmentation_percent,omitempty"`
	ReadOnly    bool     `json:"readonly,omitempty"`
}

// Dataset is one line of `zfs list -Hp -o name,used,avail,quota,refquota`.
type Dataset struct {
	Name          string `json:"name"`
	UsedBytes     uint64 `json:"used_bytes"`
	AvailBytes    uint64 `json:"avail_bytes"`
	QuotaBytes    uint64 `json:"quota_bytes,omitempty"`
	RefquotaBytes uint64 `json:"refquota_bytes,omitempty"`
}

// Event is one entry of `zpool events -v`.
type Event struct {
	Time      time.Time `json:"time"`
	Class     string    `json:"class"`
	Pool      string    `json:"pool,omitempty"`
	PoolGUID  string    `json:"pool_guid,omitempty"`
	VdevGUID  string    `json:"vdev_guid,omitempty"`
	VdevPath  string    `json:"vdev_path,omitempty"`
	VdevState string    `json:"vdev_state,omitempty"`
	// Fields holds every name/value pair of the event as printed.
	Fields map[string]string `json:"fields,omitempty"`
}

// ARC is a reading of arcstats with ratios computed over the poll interval.
type ARC struct {
	SizeBytes           uint64 `json:"size_bytes"`
	TargetBytes         uint64 `json:"target_bytes"`
	MinBytes            uint64 `json:"min_bytes"`
	MaxBytes            uint64 `json:"max_bytes"`
	Hits                uint64 `json:"hits"`
	Misses              uint64 `json:"misses"`
	DemandDataHits      uint64 `json:"demand_data_hits"`
	DemandDataMisses    uint64 `json:"demand_data_misses"`
	DemandMetadataHits  uint64 `json:"demand_metadata_hits"`
	DemandMetadataMiss  uint64 `json:"demand_metadata_misses"`
	PrefetchDataHits    uint64 `json:"prefetch_data_hits"`
	PrefetchDataMisses  uint64 `json:"prefetch_data_misses"`
	L2SizeBytes         uint64 `json:"l2_size_bytes"`
	L2Hits              uint64 `json:"l2_hits"`
	L2Misses            uint64 `json:"l2_misses"`
	MemoryThrottleCount uint64 `json:"memory_throttle_count"`
	// Interval ratios are 0..1 and only set when a previous reading exists.
	HitRatio       *float64 `json:"hit_ratio,omitempty"`
	DemandHitRatio *float64 `json:"demand_hit_ratio,omitempty"`
	L2HitRatio     *float64 `json:"l2_hit_ratio,omitempty"`
	ThrottleDelta  uint64   `json:"memory_throttle_delta"`
}
