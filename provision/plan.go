// Package provision creates a ZFS pool the way it should be created, once:
// disks resolved to their stable /dev/disk/by-id names, every pre-flight
// check a careful person would make printed PASS/WARN/FAIL with its reason
// and fix, the plan shown as the exact commands it will run, and nothing
// changed until --apply. Running it again against the pool it made reports
// "already provisioned" and any differences; it never destroys a pool.
package provision

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/yamlcheck"
	"gopkg.in/yaml.v3"
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

// Error is one problem in a plan, named by its key path.
type Error struct {
	Path    string
	Problem string
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

// Errors are every problem of a plan, so a person fixes them in one go.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es *Errors) add(path, format string, args ...any) {
	*es = append(*es, &Error{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// LoadPlan reads and validates a plan file.
func LoadPlan(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("plan file: %w", err)
	}
	p, err := ParsePlan(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("plan %s:\n%w", path, err)
	}
	return p, nil
}

// maxPlanSize bounds a plan file; real ones are a few KiB.
const maxPlanSize = 1 << 20

// ParsePlan reads and validates a plan. Unknown keys, wrong types and
// impossible values are errors naming the key path.
func ParsePlan(r io.Reader) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPlanSize+1))
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	if len(data) > maxPlanSize {
		return nil, fmt.Errorf("plan larger than %d bytes", maxPlanSize)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("plan is empty: it needs at least pool: and vdevs:")
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("plan is not valid YAML: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("plan must be a YAML mapping with pool: and vdevs:")
	}
	var errs Errors
	for _, pr := range yamlcheck.Check(&root, reflect.TypeFor[Plan](), yamlcheck.Options{NoAliases: true}) {
		errs = append(errs, planError(pr))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var p Plan
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if errs := p.Validate(); len(errs) > 0 {
		return nil, errs
	}
	return &p, nil
}

// planError words a problem yamlcheck found the way the other plan errors
// read (path: problem, "(did you mean compression?)" as for properties).
func planError(p yamlcheck.Problem) *Error {
	path := p.Path
	if path == "" {
		path = "(plan)"
	}
	msg := p.Message
	switch p.Kind {
	case yamlcheck.UnknownKey:
		hint := didYouMean(p.Key, p.Keys)
		if hint == "" {
			hint = ": known keys are " + strings.Join(p.Keys, ", ")
		}
		msg = "unknown key" + hint
	case yamlcheck.WrongKind:
		msg = fmt.Sprintf("want %s, found %s", p.Want, p.Found)
	case yamlcheck.BadValue:
		msg = fmt.Sprintf("%q: %s", p.Value, p.Message)
	}
	return &Error{Path: path, Problem: msg}
}

// didYouMean names the closest known word, when there is a close one.
func didYouMean(word string, known []string) string {
	if c := yamlcheck.Closest(word, known); c != "" {
		return fmt.Sprintf(" (did you mean %s?)", c)
	}
	return ""
}

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

// Flags are the command-line form of a simple plan:
// zwatch provision --pool vault --layout raidz2 DISK...
type Flags struct {
	Pool   string
	Layout string
	Disks  []string
	// Vdevs splits Disks into this many vdevs of equal width (default 1).
	Vdevs      int
	Log        []string // mirrored when two or more
	Cache      []string
	Spares     []string
	Ashift     int
	Mountpoint string
	// Properties are root dataset properties as key=value.
	Properties []string
	// Datasets are name or name:key=value,key=value.
	Datasets      []string
	Encrypt       bool
	Passphrase    bool
	KeyFile       string
	Normalization bool // -O normalization=formD
}

// flagPaths renames plan key paths to the flags that set them.
var flagPaths = []struct{ from, to string }{
	{"vdevs[0].layout", "--layout"},
	{"vdevs[0].disks", "DISK arguments"},
	{"vdevs", "DISK arguments"},
	{"pool", "--pool"},
	{"ashift", "--ashift"},
	{"mountpoint", "--mountpoint"},
	{"encryption.key_file", "--key-file"},
	{"log", "--log"},
	{"cache", "--cache"},
	{"spares", "--spare"},
	{"properties.", "-O "},
	{"datasets", "--dataset"},
}

// PlanFromFlags builds and validates a plan from command-line flags. Errors
// name the flags.
func PlanFromFlags(f Flags) (*Plan, error) {
	p := &Plan{Pool: f.Pool, Ashift: f.Ashift, Mountpoint: f.Mountpoint, Cache: f.Cache, Spares: f.Spares}
	var errs Errors
	n := f.Vdevs
	if n <= 0 {
		n = 1
	}
	if len(f.Disks)%n != 0 {
		errs.add("DISK arguments", "%d disks cannot be split into %d vdevs of equal width", len(f.Disks), n)
	} else if len(f.Disks) > 0 {
		w := len(f.Disks) / n
		for i := 0; i < n; i++ {
			p.Vdevs = append(p.Vdevs, VdevSpec{Layout: f.Layout, Disks: append([]string(nil), f.Disks[i*w:(i+1)*w]...)})
		}
	}
	switch len(f.Log) {
	case 0:
	case 1:
		p.Log = []VdevSpec{{Layout: LayoutDisk, Disks: f.Log}}
	default:
		p.Log = []VdevSpec{{Layout: LayoutMirror, Disks: f.Log}}
	}
	for _, kv := range f.Properties {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			errs.add("-O "+kv, "want property=value, e.g. compression=zstd-1")
			continue
		}
		if p.Properties == nil {
			p.Properties = map[string]string{}
		}
		p.Properties[k] = v
	}
	if f.Normalization {
		if p.Properties == nil {
			p.Properties = map[string]string{}
		}
		p.Properties["normalization"] = "formD"
	}
	for _, ds := range f.Datasets {
		name, props, _ := strings.Cut(ds, ":")
		d := DatasetSpec{Name: name}
		if props != "" {
			d.Properties = map[string]string{}
			for _, kv := range strings.Split(props, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					errs.add("--dataset "+ds, "want name:property=value,property=value, e.g. pictures:recordsize=1M")
					continue
				}
				if k == "mountpoint" {
					d.Mountpoint = v
					continue
				}
				d.Properties[k] = v
			}
		}
		p.Datasets = append(p.Datasets, d)
	}
	if f.Encrypt || f.Passphrase || f.KeyFile != "" {
		p.Encryption = &Encryption{Keyformat: KeyRaw, KeyFile: f.KeyFile}
		if f.Passphrase {
			p.Encryption.Keyformat = KeyPassphrase
		}
	}
	for _, e := range p.Validate() {
		path := e.Path
		for _, r := range flagPaths {
			if strings.HasPrefix(path, r.from) {
				path = r.to + strings.TrimPrefix(path, r.from)
				break
			}
		}
		errs = append(errs, &Error{Path: path, Problem: e.Problem})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
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
	Name  string // as written
	Path  string // key path, e.g. vdevs[0].disks[2]
	Class string // data, special, log, cache, spare
	Vdev  int
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
