package provision

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Pool naming rules of zpool(8) and zfs's pool_namecheck().
var (
	poolNameChars   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.:-]*$`)
	reservedPrefix  = []string{"mirror", "raidz", "draid", "spare", "log", "cache", "special", "dedup"}
	diskLikePoolCxx = regexp.MustCompile(`^c[0-9]`)
	datasetComp     = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
)

// maxNameLen is ZFS_MAX_DATASET_NAME_LEN minus the terminator.
const maxNameLen = 255

// CheckPoolName returns why name cannot name a pool, or "".
func CheckPoolName(name string) string {
	switch {
	case name == "":
		return "empty: name the pool (e.g. tank, vault)"
	case len(name) > maxNameLen:
		return fmt.Sprintf("longer than %d characters", maxNameLen)
	case !(name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z'):
		return fmt.Sprintf("%q must start with a letter", name)
	case !poolNameChars.MatchString(name):
		return fmt.Sprintf("%q may hold only letters, digits, '_', '-', '.' and ':'", name)
	case diskLikePoolCxx.MatchString(name):
		return fmt.Sprintf("%q looks like a Solaris disk name (c0...): zpool refuses names starting with c and a digit", name)
	}
	for _, r := range reservedPrefix {
		if strings.HasPrefix(name, r) {
			return fmt.Sprintf("%q begins with %q, a word zpool reserves for vdev types: choose another name", name, r)
		}
	}
	return ""
}

// parityOf is the number of disks a vdev of this layout may lose.
func parityOf(layout string, n int) int {
	switch layout {
	case LayoutMirror:
		return n - 1
	case LayoutRaidz1:
		return 1
	case LayoutRaidz2:
		return 2
	case LayoutRaidz3:
		return 3
	}
	return 0
}

// minDisks is the fewest disks zpool accepts for a layout.
func minDisks(layout string) int {
	switch layout {
	case LayoutMirror, LayoutRaidz1:
		return 2
	case LayoutRaidz2:
		return 3
	case LayoutRaidz3:
		return 4
	}
	return 1
}

// normalizeLayout accepts raidz as raidz1, and any case.
func normalizeLayout(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "raidz" {
		return LayoutRaidz1
	}
	return s
}

// Validate checks a plan and normalizes it in place (layout spellings,
// dataset names made relative to the pool). It returns every problem.
func (p *Plan) Validate() Errors {
	var errs Errors
	p.Pool = strings.TrimSpace(p.Pool)
	if why := CheckPoolName(p.Pool); why != "" {
		errs.add("pool", "%s", why)
	}
	if len(p.Vdevs) == 0 {
		errs.add("vdevs", "empty: give at least one vdev, e.g. {layout: raidz2, disks: [sdb, sdc, sdd, sde]}")
	}
	for i := range p.Vdevs {
		validateVdev(&p.Vdevs[i], fmt.Sprintf("vdevs[%d]", i), false, &errs)
	}
	// zpool create refuses mixed replication levels without -f.
	for i := 1; i < len(p.Vdevs); i++ {
		a, b := p.Vdevs[0], p.Vdevs[i]
		if a.Layout != b.Layout && validLayout(a.Layout) && validLayout(b.Layout) {
			errs.add(fmt.Sprintf("vdevs[%d].layout", i), "%s differs from vdevs[0] (%s): zpool refuses mismatched replication levels; give every data vdev the same layout", b.Layout, a.Layout)
		} else if a.Layout == b.Layout && len(a.Disks) != len(b.Disks) && a.Layout != LayoutMirror {
			errs.add(fmt.Sprintf("vdevs[%d].disks", i), "%d disks where vdevs[0] has %d: zpool refuses raidz vdevs of different widths; make them equal", len(b.Disks), len(a.Disks))
		}
	}
	for i := range p.Log {
		validateVdev(&p.Log[i], fmt.Sprintf("log[%d]", i), true, &errs)
	}
	for i := range p.Special {
		validateVdev(&p.Special[i], fmt.Sprintf("special[%d]", i), true, &errs)
	}
	for i, d := range p.Cache {
		checkDiskName(d, fmt.Sprintf("cache[%d]", i), &errs)
	}
	for i, d := range p.Spares {
		checkDiskName(d, fmt.Sprintf("spares[%d]", i), &errs)
	}
	if p.Ashift != 0 && (p.Ashift < 12 || p.Ashift > 16) {
		if p.Ashift >= 9 && p.Ashift < 12 {
			errs.add("ashift", "%d is below 12: 4K-sector disks (nearly all disks made since 2011, and every replacement you will buy) would be slowed badly; use 12, or leave ashift out to take it from the disks", p.Ashift)
		} else {
			errs.add("ashift", "%d is not an ashift zwatch uses: 12 to 16, or leave it out to take it from the disks", p.Ashift)
		}
	}
	for _, k := range sortedKeys(p.PoolProperties) {
		validatePoolProperty(k, p.PoolProperties[k], "pool_properties."+k, &errs)
	}
	for _, k := range sortedKeys(p.Properties) {
		validateDatasetProperty(k, p.Properties[k], "properties."+k, &errs)
	}
	if p.Mountpoint != "" {
		checkMountpoint(p.Mountpoint, "mountpoint", &errs)
	}
	if e := p.Encryption; e != nil {
		if e.Keyformat == "" {
			e.Keyformat = KeyRaw
		}
		switch e.Keyformat {
		case KeyRaw:
			if e.KeyFile != "" && (!filepath.IsAbs(e.KeyFile) || filepath.Clean(e.KeyFile) != e.KeyFile || strings.ContainsAny(e.KeyFile, "\n\x00")) {
				errs.add("encryption.key_file", "%q must be an absolute, clean path such as /etc/zfs/keys/%s.key", e.KeyFile, p.Pool)
			}
		case KeyPassphrase:
			if e.KeyFile != "" {
				errs.add("encryption.key_file", "only for keyformat raw: a passphrase is typed, not stored")
			}
		default:
			errs.add("encryption.keyformat", "%q is not a key format: use raw (a generated key file, loaded at boot) or passphrase (typed at every boot)", e.Keyformat)
		}
	}
	seen := map[string]int{}
	for i := range p.Datasets {
		validateDataset(p, i, seen, &errs)
	}
	return errs
}

func validLayout(l string) bool {
	switch l {
	case LayoutMirror, LayoutRaidz1, LayoutRaidz2, LayoutRaidz3:
		return true
	}
	return false
}

func validateVdev(v *VdevSpec, path string, aux bool, errs *Errors) {
	v.Layout = normalizeLayout(v.Layout)
	if aux && v.Layout == "" && len(v.Disks) == 1 {
		v.Layout = LayoutDisk
	}
	switch {
	case validLayout(v.Layout):
		if aux && v.Layout != LayoutMirror {
			errs.add(path+".layout", "%q is not a layout here: use mirror, or disk for a single disk", v.Layout)
			return
		}
	case aux && v.Layout == LayoutDisk:
		if len(v.Disks) != 1 {
			errs.add(path+".disks", "layout disk takes exactly one disk; use mirror for more")
		}
	case v.Layout == "":
		errs.add(path+".layout", "missing: use mirror, raidz1, raidz2 or raidz3")
		return
	default:
		if aux {
			errs.add(path+".layout", "%q is not a layout: use mirror, or disk for a single disk", v.Layout)
		} else {
			errs.add(path+".layout", "%q is not a layout: use mirror, raidz1, raidz2 or raidz3", v.Layout)
		}
		return
	}
	if n, want := len(v.Disks), minDisks(v.Layout); n < want {
		errs.add(path+".disks", "%s needs at least %d disks, has %d", v.Layout, want, n)
	}
	for i, d := range v.Disks {
		checkDiskName(d, fmt.Sprintf("%s.disks[%d]", path, i), errs)
	}
}

func checkDiskName(d, path string, errs *Errors) {
	switch {
	case strings.TrimSpace(d) == "":
		errs.add(path, "empty disk name")
	case strings.ContainsAny(d, "\x00\n\t ") || strings.Contains(d, ".."):
		errs.add(path, "%q is not a disk name: use sdb, /dev/sdb, a /dev/disk/by-id name or a serial number", d)
	}
}

func checkMountpoint(m, path string, errs *Errors) {
	switch {
	case m == "none" || m == "legacy":
	case !filepath.IsAbs(m) || filepath.Clean(m) != m || strings.ContainsAny(m, "\n\x00,"):
		errs.add(path, "%q must be an absolute, clean path (or none, or legacy)", m)
	}
}

func validateDataset(p *Plan, i int, seen map[string]int, errs *Errors) {
	d := &p.Datasets[i]
	path := fmt.Sprintf("datasets[%d]", i)
	d.Name = strings.Trim(strings.TrimSpace(d.Name), "/")
	if p.Pool != "" {
		d.Name = strings.TrimPrefix(d.Name, p.Pool+"/")
	}
	if d.Name == "" {
		errs.add(path+".name", "empty: name the dataset, e.g. pictures")
		return
	}
	full := p.Pool + "/" + d.Name
	if len(full) > maxNameLen {
		errs.add(path+".name", "%q: dataset names are limited to %d characters", full, maxNameLen)
	}
	for _, c := range strings.Split(d.Name, "/") {
		if !datasetComp.MatchString(c) {
			errs.add(path+".name", "%q: each part may hold only letters, digits, '_', '-', '.' and ':'", d.Name)
			return
		}
	}
	if j, dup := seen[d.Name]; dup {
		errs.add(path+".name", "%q is already datasets[%d]", d.Name, j)
		return
	}
	if parent := filepath.Dir(d.Name); parent != "." {
		if _, ok := seen[parent]; !ok {
			errs.add(path+".name", "parent %s/%s is not listed before it: add it as a dataset first", p.Pool, parent)
		}
	}
	seen[d.Name] = i
	if d.Mountpoint != "" {
		checkMountpoint(d.Mountpoint, path+".mountpoint", errs)
	}
	for _, k := range sortedKeys(d.Properties) {
		validateDatasetProperty(k, d.Properties[k], path+".properties."+k, errs)
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
