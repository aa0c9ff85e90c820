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

// DatasetProps is one filesystem or volume as the datasets collector lists
// it (DatasetPropColumns, `zfs list -Hp -t filesystem,volume -o ...`). A
// property the zfs release lacks (encryption before 0.8) is left empty.
type DatasetProps struct {
	Dataset
	// Type is filesystem or volume.
	Type                 string `json:"type"`
	UsedBySnapshotsBytes uint64 `json:"usedbysnapshots_bytes,omitempty"`
	// Mounted is yes or no; "-" for a volume.
	Mounted string `json:"mounted,omitempty"`
	// CanMount is on, off or noauto; "-" for a volume.
	CanMount string `json:"canmount,omitempty"`
	// Mountpoint is a path, none, legacy, or "-" for a volume.
	Mountpoint string `json:"mountpoint,omitempty"`
	// Encryption is off or the cipher (aes-256-gcm).
	Encryption string `json:"encryption,omitempty"`
	// EncryptionRoot is the dataset whose key this one uses; "" when none.
	EncryptionRoot string `json:"encryption_root,omitempty"`
	// KeyStatus is available or unavailable; "" when not encrypted.
	KeyStatus string `json:"keystatus,omitempty"`
	// KeyLocation is prompt, file:///path or https://...; "" when none.
	KeyLocation string `json:"keylocation,omitempty"`
	// KeyFormat is raw, hex or passphrase; "" when none.
	KeyFormat string `json:"keyformat,omitempty"`
	ReadOnly  bool   `json:"readonly,omitempty"`
	// ReceiveResumeToken is set while an interrupted resumable receive
	// (zfs receive -s) can be resumed with zfs send -t; "" when none.
	ReceiveResumeToken string `json:"receive_resume_token,omitempty"`
}

// SnapshotStats sums up one dataset's snapshots from one `zfs list -Hp -t
// snapshot -o name,creation,used -s creation`: only what the rules need,
// so 50,000 snapshots cost a few hundred bytes per dataset.
type SnapshotStats struct {
	Dataset string `json:"dataset"`
	Count   int    `json:"count"`
	// UsedBytes is the sum of each snapshot's used: the space only it holds.
	UsedBytes uint64    `json:"used_bytes"`
	Newest    time.Time `json:"newest"`
	// NewestName is the newest snapshot's name after the @.
	NewestName string `json:"newest_name"`
	// Scheme is the snapshot tool recognised from the names (sanoid,
	// zfs-auto-snapshot…) with the shortest period it used here; nil when
	// no snapshot of the dataset is named as a known tool names them.
	Scheme *SnapshotScheme `json:"scheme,omitempty"`
}

// SnapshotScheme is a snapshot tool's naming scheme seen in a dataset's
// snapshots.
type SnapshotScheme struct {
	// Tool is sanoid, zfs-auto-snapshot, truenas, zrepl or pyznap.
	Tool string `json:"tool"`
	// Label is the period as the tool names it (hourly, daily, frequent),
	// or "" when the names carry none and Period was read from the gaps.
	Label string `json:"label,omitempty"`
	// Period is the shortest period the tool used on this dataset.
	Period time.Duration `json:"period_ns"`
	// Newest is the newest snapshot the tool took, and NewestName its name
	// after the @: a manual snapshot must not hide a dead timer.
	Newest     time.Time `json:"newest"`
	NewestName string    `json:"newest_name"`
}

// ImportablePool is one pool `zpool import` (without arguments, or with -c
// cachefile) lists as found but not imported.
type ImportablePool struct {
	Name string `json:"name"`
	// ID is the pool GUID in decimal, as `zpool import ID` takes it.
	ID     string `json:"id"`
	State  string `json:"state"`
	Status string `json:"status,omitempty"`
	Action string `json:"action,omitempty"`
	// Devices is how many leaf devices its config lists; Missing names
	// those that are not ONLINE (UNAVAIL, FAULTED, REMOVED), as printed.
	Devices int      `json:"devices"`
	Missing []string `json:"missing,omitempty"`
	// Notes are the config's messages, one sentence a line ("Additional
	// devices are known to be part of this pool, though their exact
	// configuration cannot be determined."): a top-level vdev is missing.
	Notes []string `json:"notes,omitempty"`
}
