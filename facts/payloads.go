package facts

import (
	"time"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
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
	Source string           `json:"source"`
	Pools  []PoolKstatState `json:"pools"`
}

// PoolKstatState is one pool's kernel state: ONLINE, DEGRADED, FAULTED,
// OFFLINE, REMOVED, UNAVAIL, SPLIT, SUSPENDED or TRANSITIONING (OpenZFS
// spa_state_to_name).
type PoolKstatState struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// HeartbeatData is the payload of zwatch.v1.<host>.heartbeat: proof of life
// and the freshness of each collector, for the "watcher itself" rules.
type HeartbeatData struct {
	Version    string                     `json:"version"`
	Started    time.Time                  `json:"started"`
	Collectors map[string]CollectorHealth `json:"collectors"`
	// Buffer is a fleet agent's publish buffer; nil from a daemon that
	// publishes straight to its own bus.
	Buffer *BufferStats `json:"buffer,omitempty"`
}

// BufferStats is a fleet agent's publish buffer (fleet.Buffer), as sent in
// every heartbeat.
type BufferStats struct {
	// Queued messages are waiting for the cluster to accept them.
	Queued int `json:"queued"`
	// Max is the bound; when full, the oldest queued message is dropped.
	Max int `json:"max"`
	// Dropped counts messages dropped since the agent started.
	Dropped uint64 `json:"dropped"`
	// Sent counts messages the cluster acknowledged since the agent started.
	Sent uint64 `json:"sent"`
	// Retries counts failed publish attempts (timeouts, no quorum, offline).
	Retries uint64 `json:"retries"`
}

// CollectorHealth is one collector's recent history.
type CollectorHealth struct {
	Interval  time.Duration `json:"interval_ns"`
	LastOK    *time.Time    `json:"last_ok,omitempty"`
	LastError string        `json:"last_error,omitempty"`
	// Disabled says why a collector does not run here (zpool missing...).
	Disabled string `json:"disabled,omitempty"`
	// LastDuration is how long the last finished run took.
	LastDuration time.Duration `json:"last_duration_ns,omitempty"`
	// Runs and Errors count the finished runs and the failed ones since
	// the daemon started (HeartbeatData.Started), for rates over time.
	Runs   uint64 `json:"runs,omitempty"`
	Errors uint64 `json:"errors,omitempty"`
}

// CollectorErrorData is the payload of zwatch.v1.<host>.collector.error.
type CollectorErrorData struct {
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

// DatasetsData is the payload of zwatch.v1.<host>.zfs.datasets: every
// filesystem and volume, with what the collector found on this machine
// about its key file and its mountpoint directory.
type DatasetsData struct {
	// Missing names the properties this zfs release does not know (such as
	// encryption before 0.8); they were left out of the listing.
	Missing  []string       `json:"missing_properties,omitempty"`
	Datasets []DatasetState `json:"datasets"`
}

// DatasetState is one dataset and the checks the collector made of it.
type DatasetState struct {
	zfs.DatasetProps
	// KeyFile is the check of a file:// keylocation; set on encryption
	// roots with one.
	KeyFile *KeyFileCheck `json:"key_file,omitempty"`
	// Underneath is what lies in the mountpoint directory of a filesystem
	// that is meant to be mounted (canmount=on, a path) but is not: what
	// was written to the disk below instead of to the dataset.
	Underneath *DirContents `json:"underneath,omitempty"`
}

// Key file problems (KeyFileCheck.Problem).
const (
	KeyFileMissing    = "missing"    // no such file
	KeyFileUnreadable = "unreadable" // it exists but cannot be read (or is not a regular file)
	KeyFileEmpty      = "empty"
	KeyFileWrongSize  = "wrong_size" // raw must be 32 bytes, hex 64 hex digits
	KeyFileExposed    = "exposed"    // group or others may read it
)

// KeyFileCheck is what the key file of a file:// keylocation looks like
// now: the next boot's zfs load-key reads it.
type KeyFileCheck struct {
	Path string `json:"path"`
	// Problem is one of the KeyFile* constants, "" when the file is fine.
	Problem string `json:"problem,omitempty"`
	// Detail says it in words: "is 33 bytes; keyformat=raw needs exactly 32".
	Detail    string `json:"detail,omitempty"`
	Mode      string `json:"mode,omitempty"` // e.g. "0644"
	SizeBytes int64  `json:"size_bytes,omitempty"`
}

// DirContents is a bounded look at a directory on the filesystem below an
// unmounted dataset. It never follows symbolic links and never crosses into
// another mounted filesystem.
type DirContents struct {
	Path string `json:"path"`
	// Files counts what is not a directory (files, links, sockets…);
	// Bytes sums the regular files' sizes.
	Files int    `json:"files"`
	Bytes uint64 `json:"bytes"`
	// Examples are up to three of the files, relative to Path.
	Examples []string `json:"examples,omitempty"`
	// Truncated: the walk stopped at its bound, so Files and Bytes are
	// lower bounds.
	Truncated bool `json:"truncated,omitempty"`
	// Error says why the directory could not be read (or that it is a
	// symbolic link, which is not followed); Files and Bytes are then unknown.
	Error string `json:"error,omitempty"`
}

// SnapshotsData is the payload of zwatch.v1.<host>.zfs.snapshots: per
// dataset that has snapshots, their count, space and newest.
type SnapshotsData struct {
	Datasets []zfs.SnapshotStats `json:"datasets"`
	// Total is the number of snapshots listed.
	Total int `json:"total"`
}

// PoolImportData is the payload of zwatch.v1.<host>.zpool.import: the
// pools present on this machine's disks (or in its cache file) that are
// not imported, as `zpool import` reports them.
type PoolImportData struct {
	// Imported names the pools imported when zpool import ran.
	Imported []string `json:"imported"`
	// Found are the pools `zpool import` (scan of the devices) lists.
	Found []zfs.ImportablePool `json:"found"`
	// Cached are the pools of the cache file that are not imported
	// (`zpool import -c FILE`); CacheFile names it, "" when it is absent.
	CacheFile string               `json:"cache_file,omitempty"`
	Cached    []zfs.ImportablePool `json:"cached,omitempty"`
	// CacheError says why `zpool import -c FILE` could not list the cache
	// file's pools (with every device of a cached pool gone, 2.3.2 exits 1:
	// "cannot import '(null)': no such pool available"); Cached is then
	// unknown, not empty.
	CacheError string `json:"cache_error,omitempty"`
}

// PoolForgetData is the payload of zwatch.v1.<host>.zpool.forget: the
// owner says this pool is gone for good, so its missing alert and the
// alerts it kept end.
type PoolForgetData struct {
	Pool string `json:"pool"`
	// By says who asked (the user running zwatch forget-pool).
	By string `json:"by,omitempty"`
}

// IncidentActionData is the payload of zwatch.v1.<host>.incident.action:
// a person answered an incident of the host (zwatch ack, unack, snooze).
// Only the bus's own users can publish it: root on the machine, the
// servers of a fleet.
type IncidentActionData struct {
	// Incident is the incident's ID (alert.Alert.Incident).
	Incident string `json:"incident"`
	// Action is ActionAck, ActionUnack or ActionSnooze.
	Action string `json:"action"`
	// By is who answered, Source how ("cli", "telegram", "page").
	By      string `json:"by"`
	Source  string `json:"source"`
	Comment string `json:"comment,omitempty"`
	// Until ends a snooze (the silence it made does the muting).
	Until *time.Time `json:"until,omitempty"`
	// Silence is the ID of the silence a snooze made.
	Silence string `json:"silence,omitempty"`
}

// The actions of IncidentActionData.
const (
	ActionAck    = "ack"
	ActionUnack  = "unack"
	ActionSnooze = "snooze"
)

// KernelLogData is the payload of zwatch.v1.<host>.kernel.log: what the
// kernel logged about disks, links and controllers since the previous
// kernel.log fact. A burst of thousands of lines is folded into counts.
type KernelLogData struct {
	// Source is where it was read: "kmsg" (the follower), or the saved
	// format zwatch rules eval read ("dmesg -T", "journalctl -k", …).
	Source string `json:"source"`
	// Disks are the disks (or ports) the kernel named, one entry each.
	Disks []KernelDiskLog `json:"disks"`
	// Lost counts records the kernel overwrote before zwatch read them
	// (/dev/kmsg said EPIPE), since the previous fact.
	Lost uint64 `json:"lost,omitempty"`
	// Dropped counts findings over the rate limit (or about a 65th disk in
	// one fact): counted, but not attributed to a disk; since the previous fact.
	Dropped uint64 `json:"dropped,omitempty"`
	// Ignored counts records read since the follower started that say
	// nothing zwatch understands about a disk (most of the log), or name a
	// port, USB device or virtual device that carries no disk.
	Ignored uint64 `json:"ignored"`
}

// KernelDiskLog is what the kernel said about one disk or port.
type KernelDiskLog struct {
	// Ref is what the kernel called it: "sdb", "ata3", "usb 2-1", "nvme0"
	// (kernlog.Ref.String).
	Ref string `json:"ref"`
	// Disk is the physical disk it maps to; nil when the name no longer maps
	// to one (a USB disk already gone), so it is reported by name.
	Disk *disk.Identity `json:"disk,omitempty"`
	// Counts are the records by kind (kernlog.Kind: io_error, link_reset…).
	Counts map[string]int `json:"counts"`
	// First and Last are when the first and last counted record were logged.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Examples are up to three distinct messages, verbatim.
	Examples []string `json:"examples,omitempty"`
}

// DisksData is the payload of zwatch.v1.<host>.disk.inventory: every
// physical disk present now (disk.Discover).
type DisksData struct {
	Disks []disk.Identity `json:"disks"`
}

// DiskForgetData is the payload of zwatch.v1.<host>.disk.forget: the owner
// says this disk is gone for good, so its DiskVanished alert ends.
type DiskForgetData struct {
	Serial string `json:"serial"`
	By     string `json:"by,omitempty"`
}

// ZFSVersionData is the payload of zwatch.v1.<host>.zfs.version.
type ZFSVersionData struct {
	// Userland is the zfs command's version ("2.3.2-1"), Kernel the loaded
	// module's ("2.3.2-1"); "" when unknown (no module loaded, zfs before 0.8).
	Userland string `json:"userland"`
	Kernel   string `json:"kernel"`
	// Source says how it was read: "zfs version -j", "zfs version", "sysfs".
	Source string `json:"source"`
}

// MaintenanceData is the payload of zwatch.v1.<host>.maintenance: a
// scheduled job (package maintenance) started, was skipped, deferred or
// failed to start, and later how it ended.
type MaintenanceData struct {
	Job    string    `json:"job"`
	Target string    `json:"target"` // pool name or disk device
	Action string    `json:"action"` // started, skipped, deferred, failed, finished, unknown
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	// Passed is set on finished events: no errors found.
	Passed *bool `json:"passed,omitempty"`
}
