// Package provision creates a ZFS pool the way it should be created, once:
// disks resolved to their stable /dev/disk/by-id names, every pre-flight
// check a careful person would make printed PASS/WARN/FAIL with its reason
// and fix, the plan shown as the exact commands it will run, and nothing
// changed until --apply. Running it again against the pool it made reports
// "already provisioned" and any differences; it never destroys a pool.
package provision

import (
	"fmt"
	"path/filepath"
)

// Layouts of data vdevs.
const (
	LayoutMirror = "mirror"
	LayoutRaidz1 = "raidz1"
	LayoutRaidz2 = "raidz2"
	LayoutRaidz3 = "raidz3"
	// LayoutDisk is a single-disk vdev; allowed for log and special vdevs
	// only (a pool of single disks has no redundancy).
	LayoutDisk = "disk"
)

// Encryption key formats.
const (
	KeyRaw        = "raw"
	KeyPassphrase = "passphrase"
)

// DefaultKeyDir is where generated key files go.
const DefaultKeyDir = "/etc/zfs/keys"

// Plan is what a person wants: a pool, its vdevs, properties, encryption and
// datasets. Disks may be named any way (sdb, /dev/sdb, a by-id or by-path
// name, a serial number, a WWN); Inspect resolves them to by-id paths and
// makes every default explicit.
type Plan struct {
	Pool    string     `yaml:"pool"`
	Vdevs   []VdevSpec `yaml:"vdevs"`
	Log     []VdevSpec `yaml:"log,omitempty"`
	Special []VdevSpec `yaml:"special,omitempty"`
	Cache   []string   `yaml:"cache,omitempty"`
	Spares  []string   `yaml:"spares,omitempty"`
	// Ashift 0 means: from the disks' physical sector size, never below 12.
	Ashift int `yaml:"ashift,omitempty"`
	// PoolProperties are zpool create -o properties (ashift excepted).
	PoolProperties map[string]string `yaml:"pool_properties,omitempty"`
	// Properties are the root dataset's properties (zpool create -O).
	Properties map[string]string `yaml:"properties,omitempty"`
	// Mountpoint of the root dataset; empty means /<pool>.
	Mountpoint string        `yaml:"mountpoint,omitempty"`
	Encryption *Encryption   `yaml:"encryption,omitempty"`
	Datasets   []DatasetSpec `yaml:"datasets,omitempty"`

	// Wipe lists devices (by-id paths, partitions included) whose signatures
	// are erased before the pool is created. Inspect fills it when --wipe is
	// given and the disks carry signatures; it is never read from a file.
	Wipe []WipeTarget `yaml:"-"`
	// Resolved is set once disk names are by-id paths and defaults explicit.
	Resolved bool `yaml:"-"`
	// unitPresent: the key-loading unit file exists; it is not written.
	unitPresent bool
}

// VdevSpec is one vdev: a layout and its disks.
type VdevSpec struct {
	Layout string   `yaml:"layout"`
	Disks  []string `yaml:"disks"`
}

// Encryption asks for native ZFS encryption of the whole pool
// (aes-256-gcm on the root dataset, inherited by every dataset).
type Encryption struct {
	// Keyformat is raw (default: a generated 32-byte key file) or passphrase
	// (asked for on the terminal, then typed at every boot).
	Keyformat string `yaml:"keyformat,omitempty"`
	// KeyFile is where the raw key is written; default /etc/zfs/keys/<pool>.key.
	KeyFile string `yaml:"key_file,omitempty"`
	// Unit installs the zfs-load-key@.service systemd unit that loads the
	// key at boot (default true for raw keys).
	Unit *bool `yaml:"systemd_unit,omitempty"`
}

// DatasetSpec is one dataset below the pool's root dataset.
type DatasetSpec struct {
	// Name relative to the pool ("pictures", "media/photos"), or with it.
	Name       string            `yaml:"name"`
	Mountpoint string            `yaml:"mountpoint,omitempty"`
	Properties map[string]string `yaml:"properties,omitempty"`
}

// WipeTarget is one device to wipe and what is on it now.
type WipeTarget struct {
	Device string
	// ZFSLabel is set when the device carries ZFS labels (zpool labelclear
	// runs before wipefs, which leaves ZFS's label nvlists behind).
	ZFSLabel bool
	// Preview is `wipefs --no-act` output: what will be destroyed.
	Preview string
}

// AllDisks lists every disk name of the plan with the key path that names it.
func (p *Plan) AllDisks() []DiskRef {
	var out []DiskRef
	add := func(class string, vs []VdevSpec, key string) {
		for i, v := range vs {
			for j, d := range v.Disks {
				out = append(out, DiskRef{Name: d, Path: fmt.Sprintf("%s[%d].disks[%d]", key, i, j), Class: class, Vdev: i})
			}
		}
	}
	add("data", p.Vdevs, "vdevs")
	add("special", p.Special, "special")
	add("log", p.Log, "log")
	for i, d := range p.Cache {
		out = append(out, DiskRef{Name: d, Path: fmt.Sprintf("cache[%d]", i), Class: "cache", Vdev: i})
	}
	for i, d := range p.Spares {
		out = append(out, DiskRef{Name: d, Path: fmt.Sprintf("spares[%d]", i), Class: "spare", Vdev: i})
	}
	return out
}

// DiskRef is one disk name in a plan.
type DiskRef struct {
	Name  string `json:"name"`  // as written
	Path  string `json:"path"`  // key path, e.g. vdevs[0].disks[2]
	Class string `json:"class"` // data, special, log, cache, spare
	Vdev  int    `json:"vdev"`
}

// rename replaces every disk name by what m maps it to.
func (p *Plan) rename(m map[string]string) {
	ren := func(ds []string) {
		for i, d := range ds {
			if n, ok := m[d]; ok {
				ds[i] = n
			}
		}
	}
	for _, vs := range [][]VdevSpec{p.Vdevs, p.Log, p.Special} {
		for i := range vs {
			ren(vs[i].Disks)
		}
	}
	ren(p.Cache)
	ren(p.Spares)
}

// clone deep-copies a plan.
func (p *Plan) clone() *Plan {
	c := *p
	cpV := func(vs []VdevSpec) []VdevSpec {
		if vs == nil {
			return nil
		}
		out := make([]VdevSpec, len(vs))
		for i, v := range vs {
			out[i] = VdevSpec{Layout: v.Layout, Disks: append([]string(nil), v.Disks...)}
		}
		return out
	}
	cpM := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	c.Vdevs, c.Log, c.Special = cpV(p.Vdevs), cpV(p.Log), cpV(p.Special)
	c.Cache = append([]string(nil), p.Cache...)
	c.Spares = append([]string(nil), p.Spares...)
	c.PoolProperties, c.Properties = cpM(p.PoolProperties), cpM(p.Properties)
	if p.Encryption != nil {
		e := *p.Encryption
		c.Encryption = &e
	}
	c.Datasets = make([]DatasetSpec, len(p.Datasets))
	for i, d := range p.Datasets {
		c.Datasets[i] = DatasetSpec{Name: d.Name, Mountpoint: d.Mountpoint, Properties: cpM(d.Properties)}
	}
	c.Wipe = append([]WipeTarget(nil), p.Wipe...)
	return &c
}

// keyFile is the raw key file path of an encrypted plan.
func (p *Plan) keyFile() string {
	if p.Encryption == nil || p.Encryption.Keyformat != KeyRaw {
		return ""
	}
	if p.Encryption.KeyFile != "" {
		return p.Encryption.KeyFile
	}
	return filepath.Join(DefaultKeyDir, p.Pool+".key")
}

// wantUnit reports whether the boot-time key-loading unit is installed.
func (p *Plan) wantUnit() bool {
	if p.Encryption == nil || p.Encryption.Keyformat != KeyRaw {
		return false
	}
	return p.Encryption.Unit == nil || *p.Encryption.Unit
}
