package provision

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/units"

	"github.com/zwatch/zwatch/disk"
	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/smart"
)

// Status of a pre-flight check.
type Status string

// Check statuses. FAIL stops --apply; WARN is printed and allowed.
const (
	Pass Status = "PASS"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// CheckResult is one pre-flight check on one subject.
type CheckResult struct {
	// Check names the check: device, by-id, mounted, swap, holders,
	// signatures, zfs-label, duplicate, pool-name, tools, sizes, ashift, smr,
	// usb, smart, mixed-media, aes, key-file, systemd-unit, layout, space.
	Check string `json:"check"`
	// Subject is the disk (kernel name), pool or dataset checked.
	Subject string `json:"subject"`
	Status  Status `json:"status"`
	Reason  string `json:"reason"`
	Fix     string `json:"fix,omitempty"`
	// Detail is evidence to show under the line (wipefs output).
	Detail string `json:"detail,omitempty"`
}

// DiskInfo is one resolved disk of the plan.
type DiskInfo struct {
	// Names are the names the plan used for it (more than one is an error).
	Names []string `json:"names"`
	// Ref is where the plan first names it.
	Ref DiskRef       `json:"ref"`
	ID  disk.Identity `json:"identity"`
	// Partitions are the kernel names of its partitions now.
	Partitions []string `json:"partitions,omitempty"`
}

// Inspection is what Inspect learned: the resolved plan, the disks, every
// check, and whether the pool exists already.
type Inspection struct {
	// Plan is the resolved plan: by-id names, explicit ashift and defaults.
	// Nil when the disks could not all be resolved.
	Plan   *Plan         `json:"-"`
	Disks  []DiskInfo    `json:"disks"`
	Checks []CheckResult `json:"checks"`
	// Pools are the imported pools (zpool list -H -o name).
	Pools []string `json:"pools"`
	// Exists is true when the plan's pool is imported: provisioning turns
	// into a comparison and nothing on the disks is checked.
	Exists bool `json:"exists"`
	// Summary is the layout in words: "raidz2 of 6 × 4 TB: 16 TB usable, …".
	Summary string `json:"summary"`
}

// Failed reports whether any check failed.
func (in *Inspection) Failed() bool {
	for _, c := range in.Checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// InspectOptions change what Inspect accepts.
type InspectOptions struct {
	// Wipe allows disks with partition tables, filesystems or labels of an
	// exported pool: they are listed with what will be destroyed.
	Wipe bool
}

// Check runs every pre-flight check of plan p on host h.
func Check(ctx context.Context, h Host, p *Plan, opts InspectOptions) []CheckResult {
	in, err := Inspect(ctx, h, p, opts)
	if err != nil {
		return []CheckResult{{Check: "device", Subject: p.Pool, Status: Fail, Reason: err.Error(), Fix: "run zwatch provision as root on the machine with the disks"}}
	}
	return in.Checks
}

type inspector struct {
	ctx    context.Context
	h      Host
	p      *Plan
	opts   InspectOptions
	in     *Inspection
	ids    []disk.Identity
	res    *disk.Resolver
	byKern map[string]*DiskInfo
	// wipe collects what --wipe erases; unitPresent is set when the
	// key-loading unit file is already there.
	wipe        []WipeTarget
	unitPresent bool
}

func (s *inspector) add(c CheckResult) { s.in.Checks = append(s.in.Checks, c) }

// Inspect resolves the plan's disks on h and runs every pre-flight check.
// The error is for a host that cannot be inspected at all (no sysfs);
// everything else is a check result.
func Inspect(ctx context.Context, h Host, p *Plan, opts InspectOptions) (*Inspection, error) {
	s := &inspector{ctx: ctx, h: h, p: p, opts: opts, in: &Inspection{}, byKern: map[string]*DiskInfo{}}
	if !s.poolName() {
		return s.in, nil
	}
	ids, err := disk.Discover(h.Root())
	if err != nil {
		return nil, err
	}
	s.ids = ids
	s.res = disk.NewResolver(h.Root(), ids)
	names := s.resolveAll()
	for i := range s.in.Disks {
		s.diskChecks(&s.in.Disks[i])
	}
	s.poolChecks()
	if names != nil {
		s.in.Plan = s.finalPlan(names)
		s.in.Checks = append(s.in.Checks, SpaceTraps(s.in.Plan)...)
	}
	s.in.Summary = s.summary()
	return s.in, nil
}

// poolName checks the name and whether the pool exists; false stops
// inspection (the pool is there: compare instead).
func (s *inspector) poolName() bool {
	out, _, err := runOut(s.ctx, s.h, "zpool", "list", "-H", "-o", "name")
	switch {
	case execx.KindOf(err) == execx.KindMissing:
		s.add(CheckResult{Check: "tools", Subject: "zpool", Status: Fail, Reason: "zpool is not installed", Fix: "install OpenZFS (Debian/Ubuntu: apt install zfsutils-linux) and load the module (modprobe zfs)"})
	case err != nil:
		s.add(CheckResult{Check: "tools", Subject: "zpool", Status: Fail, Reason: "zpool list failed: " + err.Error(), Fix: "check that the zfs kernel module is loaded (modprobe zfs) and that you are root"})
	}
	for _, l := range strings.Split(string(out), "\n") {
		// Pool names have no spaces: "no pools available" is not one.
		if l = strings.TrimSpace(l); l != "" && !strings.ContainsAny(l, " \t") {
			s.in.Pools = append(s.in.Pools, l)
		}
	}
	for _, name := range s.in.Pools {
		if name == s.p.Pool {
			s.in.Exists = true
			s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Pass, Reason: "pool " + s.p.Pool + " exists: comparing it with the plan instead of creating it"})
			return false
		}
	}
	if why := CheckPoolName(s.p.Pool); why != "" {
		s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Fail, Reason: why, Fix: "choose a name that starts with a letter, e.g. tank or vault"})
	} else {
		s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Pass, Reason: fmt.Sprintf("%q is a valid pool name and not taken", s.p.Pool)})
	}
	return true
}

var (
	rePartByID   = regexp.MustCompile(`-part\d+$`)
	rePartKernel = regexp.MustCompile(`^(?:(?:nvme\d+n\d+|mmcblk\d+|loop\d+|nbd\d+)p\d+|(?:sd|vd|xvd|hd)[a-z]+\d+)$`)
)

// resolveAll resolves every disk name; it returns the name → by-id map, or
// nil when some disk could not be resolved to a by-id name.
func (s *inspector) resolveAll() map[string]string {
	names := map[string]string{}
	ok := true
	for _, ref := range s.p.AllDisks() {
		id, err := s.res.Resolve(ref.Name, "")
		if err != nil {
			ok = false
			s.add(CheckResult{Check: "device", Subject: ref.Name, Status: Fail,
				Reason: fmt.Sprintf("%s (%s): no such disk on this machine", ref.Name, ref.Path),
				Fix:    "list the disks with `ls -l /dev/disk/by-id/` or `lsblk -o NAME,MODEL,SERIAL,SIZE` and name one of them"})
			continue
		}
		if id.Absent {
			ok = false
			s.add(CheckResult{Check: "device", Subject: ref.Name, Status: Fail,
				Reason: fmt.Sprintf("%s (%s): the disk %s is not attached now", ref.Name, ref.Path, id.ByID),
				Fix:    "connect the disk, or check the cable and power"})
			continue
		}
		if s.isPartition(ref.Name, id.Kernel) {
			ok = false
			s.add(CheckResult{Check: "device", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s (%s) is a partition of %s, not a whole disk", ref.Name, ref.Path, id.Kernel),
				Fix:    fmt.Sprintf("give the whole disk (%s): ZFS partitions it itself and then manages its write cache", firstNonEmpty(id.ByID, "/dev/"+id.Kernel))})
			continue
		}
		if di, dup := s.byKern[id.Kernel]; dup {
			ok = false
			s.add(CheckResult{Check: "duplicate", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s (%s) and %s (%s) are the same disk %s", di.Ref.Name, di.Ref.Path, ref.Name, ref.Path, id.Kernel),
				Fix:    "name each disk once; one of the two names is a mistake"})
			di.Names = append(di.Names, ref.Name)
			continue
		}
		s.in.Disks = append(s.in.Disks, DiskInfo{Names: []string{ref.Name}, Ref: ref, ID: id, Partitions: s.partitions(id.Kernel)})
		s.byKern[id.Kernel] = &s.in.Disks[len(s.in.Disks)-1]
		if id.ByID == "" {
			ok = false
			s.add(CheckResult{Check: "by-id", Subject: id.Kernel, Status: Fail,
				Reason: fmt.Sprintf("%s has no /dev/disk/by-id name: a pool made of kernel names breaks when they change at boot", id.Kernel),
				Fix:    "check that udev runs; a virtual disk needs a serial number (QEMU: -device ...,serial=XYZ)"})
			continue
		}
		names[ref.Name] = id.ByID
	}
	// s.byKern points into s.in.Disks: rebuild after appends moved it.
	for i := range s.in.Disks {
		s.byKern[s.in.Disks[i].ID.Kernel] = &s.in.Disks[i]
	}
	if !ok {
		return nil
	}
	return names
}

// isPartition reports whether name, as written, is a partition of kernel.
func (s *inspector) isPartition(name, kernel string) bool {
	base := filepath.Base(name)
	if rePartByID.MatchString(base) {
		return true
	}
	for _, p := range candidatePaths(name) {
		t, err := filepath.EvalSymlinks(filepath.Join(s.h.Root(), p))
		if err == nil {
			return filepath.Base(t) != kernel
		}
	}
	return rePartKernel.MatchString(base) && base != kernel
}

func candidatePaths(s string) []string {
	if strings.HasPrefix(s, "/") {
		return []string{s}
	}
	out := []string{"/dev/" + s}
	for _, d := range [...]string{"by-id", "by-path", "by-partuuid", "by-uuid", "by-vdev", "by-partlabel"} {
		out = append(out, "/dev/disk/"+d+"/"+s)
	}
	return out
}

// partitions lists a disk's partitions from sysfs.
func (s *inspector) partitions(kernel string) []string {
	var out []string
	for _, n := range readDirNames(s.h, "/sys/block/"+kernel) {
		if strings.HasPrefix(n, kernel) && exists(s.h, "/sys/block/"+kernel+"/"+n+"/partition") {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return partNum(out[i]) < partNum(out[j]) })
	return out
}

var reTrailingNum = regexp.MustCompile(`(\d+)$`)

func partNum(name string) int {
	m := reTrailingNum.FindString(name)
	n := 0
	for _, c := range m {
		n = n*10 + int(c-'0')
	}
	return n
}

// partDevice is how a partition is named in commands: its by-id -partN
// name when udev made one, else /dev/<name>.
func (s *inspector) partDevice(id disk.Identity, part string) string {
	if id.ByID != "" {
		n := strings.TrimPrefix(part, id.Kernel)
		n = strings.TrimPrefix(n, "p")
		cand := id.ByID + "-part" + n
		if exists(s.h, cand) {
			return cand
		}
	}
	return "/dev/" + part
}

// devOf is how the whole disk is named in commands.
func devOf(id disk.Identity) string {
	if id.ByID != "" {
		return id.ByID
	}
	return "/dev/" + id.Kernel
}

func describe(id disk.Identity) string {
	parts := []string{}
	if id.Model != "" {
		parts = append(parts, id.Model)
	}
	if id.Serial != "" {
		parts = append(parts, "serial "+id.Serial)
	}
	return strings.Join(parts, ", ")
}

func (s *inspector) diskChecks(d *DiskInfo) {
	id := d.ID
	k := id.Kernel
	s.add(CheckResult{Check: "device", Subject: k, Status: Pass,
		Reason: fmt.Sprintf("%s is the whole disk %s (%s)", d.Ref.Name, k, describe(id))})
	s.checkMounted(d)
	s.checkSwap(d)
	s.checkHolders(d)
	s.checkSignatures(d)
	if m, ok := disk.LookupSMR(id.Model); ok {
		s.add(CheckResult{Check: "smr", Subject: k, Status: Warn,
			Reason: fmt.Sprintf("%s is %s %s, a drive-managed SMR disk: under a resilver or scrub it stalls for seconds at a time; resilvers may take days or fail with the disk faulted (source: %s)", id.Model, m.Vendor, m.Family, m.Source),
			Fix:    "use CMR disks for ZFS (WD Red Plus/Pro, Seagate IronWolf, Toshiba N300, enterprise models); keep SMR disks for backups written once"})
	}
	if id.Transport == disk.TransportUSB {
		s.add(CheckResult{Check: "usb", Subject: k, Status: Warn,
			Reason: fmt.Sprintf("%s is attached through a USB bridge: many bridges do not pass SMART through, and a USB reset drops the disk from the pool mid-write", k),
			Fix:    "prefer SATA or SAS; if USB it must be, use a powered UAS enclosure and check `smartctl -d sat -a " + devOf(id) + "` works"})
	}
	s.checkSMART(d)
}

// checkMounted looks for the disk or its partitions in /proc/self/mountinfo.
func (s *inspector) checkMounted(d *DiskInfo) {
	data, err := s.h.ReadFile("/proc/self/mountinfo")
	if err != nil {
		s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Warn, Reason: "cannot read /proc/self/mountinfo: " + err.Error(), Fix: "run on the machine itself, as root"})
		return
	}
	devs := s.devNumbers(d)
	var hits []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+3 || len(f) < 5 {
			continue
		}
		majmin, mnt, src := f[2], unescapeMount(f[4]), f[sep+2]
		name, ok := devs[majmin]
		if !ok && strings.HasPrefix(src, "/dev/") {
			if id, err := s.res.Resolve(src, ""); err == nil && id.Kernel == d.ID.Kernel && !id.Absent {
				name, ok = filepath.Base(src), true
			}
		}
		if ok {
			hits = append(hits, fmt.Sprintf("%s on %s", name, mnt))
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is in use: %s mounted", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    "this disk holds a mounted filesystem; if it is the wrong disk, pick another; else unmount it and remove it from /etc/fstab first"})
		return
	}
	s.add(CheckResult{Check: "mounted", Subject: d.ID.Kernel, Status: Pass, Reason: "nothing on it is mounted"})
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' {
			v := (s[i+1]-'0')*64 + (s[i+2]-'0')*8 + (s[i+3] - '0')
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// devNumbers maps "major:minor" of the disk and its partitions to names.
func (s *inspector) devNumbers(d *DiskInfo) map[string]string {
	out := map[string]string{}
	add := func(sysPath, name string) {
		b, err := s.h.ReadFile(sysPath + "/dev")
		if err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				out[v] = name
			}
		}
	}
	add("/sys/block/"+d.ID.Kernel, d.ID.Kernel)
	for _, p := range d.Partitions {
		add("/sys/block/"+d.ID.Kernel+"/"+p, p)
	}
	return out
}

func (s *inspector) checkSwap(d *DiskInfo) {
	data, err := s.h.ReadFile("/proc/swaps")
	if err != nil {
		s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Warn, Reason: "cannot read /proc/swaps: " + err.Error()})
		return
	}
	var hits []string
	for i, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if i == 0 || len(f) < 2 || !strings.HasPrefix(f[0], "/dev/") {
			continue
		}
		if id, err := s.res.Resolve(unescapeMount(f[0]), ""); err == nil && !id.Absent && id.Kernel == d.ID.Kernel {
			hits = append(hits, f[0])
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is in use as swap (%s)", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    fmt.Sprintf("if this is the wrong disk, pick another; else swapoff %s and remove it from /etc/fstab", strings.Join(hits, " "))})
		return
	}
	s.add(CheckResult{Check: "swap", Subject: d.ID.Kernel, Status: Pass, Reason: "not used as swap"})
}

// checkHolders finds device-mapper, md or bcache devices built on the disk.
func (s *inspector) checkHolders(d *DiskInfo) {
	var hits []string
	for _, p := range append([]string{""}, d.Partitions...) {
		dir := "/sys/block/" + d.ID.Kernel
		name := d.ID.Kernel
		if p != "" {
			dir += "/" + p
			name = p
		}
		for _, hname := range readDirNames(s.h, dir+"/holders") {
			hits = append(hits, name+" → "+hname)
		}
	}
	if len(hits) > 0 {
		s.add(CheckResult{Check: "holders", Subject: d.ID.Kernel, Status: Fail,
			Reason: fmt.Sprintf("%s is used by another block device (%s): LVM, LUKS, md RAID or bcache", d.ID.Kernel, strings.Join(hits, ", ")),
			Fix:    "find the owner with `lsblk " + "/dev/" + d.ID.Kernel + "`; stop and remove it (vgchange -an, cryptsetup close, mdadm --stop) only if its data is not needed"})
		return
	}
	s.add(CheckResult{Check: "holders", Subject: d.ID.Kernel, Status: Pass, Reason: "not part of LVM, LUKS, md RAID or bcache"})
}

// signature is one device's blkid -p -o export result.
type signature struct {
	device string
	kv     map[string]string
}

func (g signature) String() string {
	var parts []string
	if t := g.kv["PTTYPE"]; t != "" {
		parts = append(parts, t+" partition table")
	}
	if t := g.kv["TYPE"]; t != "" {
		x := t
		if l := g.kv["LABEL"]; l != "" {
			if t == "zfs_member" {
				x += " of pool " + l
			} else {
				x += fmt.Sprintf(" labelled %q", l)
			}
		}
		parts = append(parts, x)
	}
	return g.device + ": " + strings.Join(parts, ", ")
}

// ParseBlkidExport reads `blkid -p -o export` output (KEY=value lines).
func ParseBlkidExport(b []byte) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if ok && k != "" {
			out[k] = strings.ReplaceAll(v, `\ `, " ")
		}
	}
	return out
}

func (s *inspector) probe(dev string) (signature, error) {
	out, code, err := runOut(s.ctx, s.h, "blkid", "-p", "-o", "export", dev)
	if err != nil && !(execx.KindOf(err) == execx.KindFailed && code == 2) {
		return signature{}, err
	}
	kv := ParseBlkidExport(out)
	if code == 2 {
		kv = map[string]string{} // blkid: nothing found
	}
	return signature{device: dev, kv: kv}, nil
}

// checkSignatures probes the disk and each partition for partition tables,
// filesystems and ZFS labels.
func (s *inspector) checkSignatures(d *DiskInfo) {
	k := d.ID.Kernel
	devs := []string{devOf(d.ID)}
	for _, p := range d.Partitions {
		devs = append(devs, s.partDevice(d.ID, p))
	}
	var found []signature
	for _, dev := range devs {
		g, err := s.probe(dev)
		if err != nil {
			s.add(CheckResult{Check: "signatures", Subject: k, Status: Fail, Reason: "blkid -p " + dev + " failed: " + err.Error(), Fix: "install util-linux (blkid, wipefs) and run as root"})
			return
		}
		if g.kv["TYPE"] != "" || g.kv["PTTYPE"] != "" {
			found = append(found, g)
		}
	}
	if len(found) == 0 {
		s.add(CheckResult{Check: "signatures", Subject: k, Status: Pass, Reason: "blank: no partition table, filesystem or ZFS label (blkid -p)"})
		s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Pass, Reason: "no ZFS label: not part of any pool"})
		return
	}
	// ZFS labels first: a disk of an imported pool is never offered for wiping.
	var zfsPools []string
	zfsDev := map[string]bool{}
	for _, g := range found {
		if g.kv["TYPE"] != "zfs_member" {
			continue
		}
		zfsDev[g.device] = true
		pool := g.kv["LABEL"]
		for _, imp := range s.in.Pools {
			if imp == pool {
				s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Fail,
					Reason: fmt.Sprintf("%s belongs to the imported pool %s (%s)", k, pool, g.device),
					Fix:    "this disk is in use: choose another disk (zwatch never wipes a disk of an imported pool)"})
				return
			}
		}
		state := s.zdbState(g.device)
		zfsPools = append(zfsPools, fmt.Sprintf("%s%s", pool, state))
	}
	if len(zfsPools) > 0 {
		reason := fmt.Sprintf("%s carries ZFS labels of pool %s, not imported: `zpool import` would offer it", k, strings.Join(zfsPools, ", "))
		if s.opts.Wipe {
			s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Warn, Reason: reason + "; --wipe clears them (zpool labelclear) and the pool can no longer be imported from this disk"})
		} else {
			s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Fail, Reason: reason,
				Fix: "if that pool is wanted, import it (zpool import) instead; if it is gone for good, run again with --wipe"})
		}
	} else {
		s.add(CheckResult{Check: "zfs-label", Subject: k, Status: Pass, Reason: "no ZFS label: not part of any pool"})
	}
	var what []string
	for _, g := range found {
		what = append(what, g.String())
	}
	if !s.opts.Wipe {
		s.add(CheckResult{Check: "signatures", Subject: k, Status: Fail,
			Reason: "not blank: " + strings.Join(what, "; "),
			Fix:    "check nothing on it is needed (mount it read-only and look); then run again with --wipe to erase these signatures (zwatch shows what will be destroyed first)"})
		return
	}
	// --wipe: show what wipefs would erase, partitions before the disk.
	var targets []WipeTarget
	var preview []string
	for i := len(found) - 1; i >= 0; i-- {
		g := found[i]
		out, _, err := runOut(s.ctx, s.h, "wipefs", "--no-act", g.device)
		text := strings.TrimRight(string(out), "\n")
		if err != nil {
			text = "wipefs --no-act failed: " + err.Error()
		}
		preview = append(preview, text)
		targets = append(targets, WipeTarget{Device: g.device, ZFSLabel: zfsDev[g.device], Preview: text})
	}
	s.wipe = append(s.wipe, targets...)
	s.add(CheckResult{Check: "signatures", Subject: k, Status: Warn,
		Reason: "--wipe will destroy: " + strings.Join(what, "; "),
		Fix:    "the wipefs commands below keep a backup of each erased signature in $HOME (wipefs --backup); the data behind them is not erased but will be overwritten by the pool",
		Detail: strings.Join(preview, "\n")})
}

var (
	reZdbName  = regexp.MustCompile(`(?m)^\s*name: '([^']*)'`)
	reZdbState = regexp.MustCompile(`(?m)^\s*state: (\d+)`)
)

// zdbState reads a label's pool state with zdb -l: " (exported)" etc.
func (s *inspector) zdbState(dev string) string {
	out, _, err := runOut(s.ctx, s.h, "zdb", "-l", dev)
	if err != nil && len(out) == 0 {
		return ""
	}
	name, state := ParseZdbLabel(out)
	if name == "" {
		return ""
	}
	return " (" + state + ")"
}

// ParseZdbLabel takes the pool name and state from `zdb -l` output: state 0
// active (imported on this or another machine), 1 exported, 2 destroyed.
func ParseZdbLabel(b []byte) (name, state string) {
	if m := reZdbName.FindSubmatch(b); m != nil {
		name = string(m[1])
	}
	if m := reZdbState.FindSubmatch(b); m != nil {
		switch string(m[1]) {
		case "0":
			state = "active: in use by this or another machine"
		case "1":
			state = "exported"
		case "2":
			state = "destroyed"
		case "3":
			state = "spare"
		case "4":
			state = "l2cache"
		default:
			state = "state " + string(m[1])
		}
	}
	return name, state
}

func (s *inspector) checkSMART(d *DiskInfo) {
	k := d.ID.Kernel
	argv := []string{"smartctl", "-j", "-a"}
	if d.ID.SmartType != "" {
		argv = append(argv, "-d", d.ID.SmartType)
	}
	argv = append(argv, devOf(d.ID))
	out, _, err := runOut(s.ctx, s.h, argv...)
	if kind := execx.KindOf(err); kind == execx.KindMissing {
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl is not installed: disk health unknown", Fix: "install smartmontools (apt install smartmontools) and run again"})
		return
	} else if err != nil && len(out) == 0 {
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl failed: " + err.Error(), Fix: "run `" + shellJoin(argv) + "` to see why"})
		return
	}
	rep, perr := smart.Parse(bytes.NewReader(out))
	switch {
	case perr != nil:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl output unreadable: " + perr.Error(), Fix: "run `" + shellJoin(argv) + "`"})
	case rep.SmartPassed == nil:
		msg := "SMART health unknown"
		if len(rep.Errors) > 0 {
			msg += ": " + rep.Errors[0]
		}
		fix := "run `" + shellJoin(argv) + "`"
		if d.ID.Transport == disk.TransportUSB {
			fix = "the USB bridge may need a type: try `smartctl -d sat -a " + devOf(d.ID) + "`"
		}
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: msg, Fix: fix})
	case !*rep.SmartPassed:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Fail,
			Reason: fmt.Sprintf("SMART overall health FAILED (%s): the disk itself predicts its failure", describe(d.ID)),
			Fix:    "do not build a pool on it: return it under warranty or replace it"})
	default:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Pass, Reason: "SMART overall health PASSED"})
	}
}

// poolChecks are the checks across disks: sizes, ashift, mixed media, AES,
// key file.
func (s *inspector) poolChecks() {
	p := s.p
	classes := []struct {
		name string
		vs   []VdevSpec
	}{{"vdevs", p.Vdevs}, {"special", p.Special}, {"log", p.Log}}
	for _, c := range classes {
		for i, v := range c.vs {
			s.checkSizes(fmt.Sprintf("%s[%d]", c.name, i), v)
			s.checkMixedMedia(fmt.Sprintf("%s[%d]", c.name, i), v)
		}
	}
	s.checkAshift()
	if p.Encryption != nil {
		s.checkAES()
		s.checkKeyFile()
	}
	if len(p.Vdevs) > 0 && p.Vdevs[0].Layout == LayoutRaidz1 {
		if d := s.diskOf(p.Vdevs[0].Disks[0]); d != nil && d.ID.SizeBytes >= 4e12 {
			s.add(CheckResult{Check: "layout", Subject: p.Pool, Status: Warn,
				Reason: fmt.Sprintf("raidz1 of %s disks: while one disk resilvers (a day or more at this size) the pool has no redundancy left, and one unreadable sector on another disk loses a file", units.Decimal(d.ID.SizeBytes)),
				Fix:    "use raidz2 (or mirrors) for disks of 4 TB and more"})
		}
	}
	dataRed := -1
	for _, v := range p.Vdevs {
		if r := parityOf(v.Layout, len(v.Disks)); dataRed < 0 || r < dataRed {
			dataRed = r
		}
	}
	for i, v := range p.Special {
		if r := parityOf(v.Layout, len(v.Disks)); r < dataRed {
			s.add(CheckResult{Check: "layout", Subject: fmt.Sprintf("special[%d]", i), Status: Warn,
				Reason: fmt.Sprintf("the special vdev survives %d disk failures, the data vdevs %d: when the special vdev is lost, the whole pool is lost", r, dataRed),
				Fix:    "mirror the special vdev at least as widely as the data vdevs are redundant"})
		}
	}
}

func (s *inspector) diskOf(name string) *DiskInfo {
	for i := range s.in.Disks {
		for _, n := range s.in.Disks[i].Names {
			if n == name {
				return &s.in.Disks[i]
			}
		}
	}
	return nil
}

func (s *inspector) vdevDisks(v VdevSpec) []*DiskInfo {
	var out []*DiskInfo
	for _, n := range v.Disks {
		if d := s.diskOf(n); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func (s *inspector) checkSizes(path string, v VdevSpec) {
	ds := s.vdevDisks(v)
	if len(ds) < 2 {
		return
	}
	lo, hi := ds[0].ID.SizeBytes, ds[0].ID.SizeBytes
	for _, d := range ds {
		lo, hi = min(lo, d.ID.SizeBytes), max(hi, d.ID.SizeBytes)
	}
	if hi == 0 {
		return
	}
	if (hi-lo)*100 <= hi {
		s.add(CheckResult{Check: "sizes", Subject: path, Status: Pass, Reason: fmt.Sprintf("disk sizes within 1 %% of each other (%s)", units.Decimal(lo))})
		return
	}
	var lost uint64
	for _, d := range ds {
		lost += d.ID.SizeBytes - lo
	}
	s.add(CheckResult{Check: "sizes", Subject: path, Status: Warn,
		Reason: fmt.Sprintf("disk sizes differ from %s to %s: every disk of a %s is used only up to the smallest, so %s of raw capacity is lost", units.Decimal(lo), units.Decimal(hi), v.Layout, units.Decimal(lost)),
		Fix:    "use disks of the same size in a vdev; the space comes back (autoexpand=on) once the small disks are replaced"})
}

func (s *inspector) checkMixedMedia(path string, v VdevSpec) {
	ds := s.vdevDisks(v)
	ssd, hdd := 0, 0
	for _, d := range ds {
		if d.ID.RotationRPM == 0 {
			ssd++
		} else {
			hdd++
		}
	}
	if ssd > 0 && hdd > 0 {
		s.add(CheckResult{Check: "mixed-media", Subject: path, Status: Warn,
			Reason: fmt.Sprintf("%s mixes %d SSDs with %d spinning disks: it runs at the speed of the slowest", path, ssd, hdd),
			Fix:    "keep SSDs and spinning disks in separate vdevs (SSDs make a good special vdev)"})
	}
}

// AshiftFor is the ashift for a physical sector size: log2, never below 12
// (replacement disks will be 4K-sector even if these are not), at most 16.
func AshiftFor(physical int) int {
	if physical <= 0 {
		return 12
	}
	a := bits.Len(uint(physical)) - 1
	return min(max(a, 12), 16)
}

func (s *inspector) diskAshift() (int, int) {
	phys := 0
	for _, d := range s.in.Disks {
		if d.Ref.Class == "cache" {
			continue // L2ARC devices have their own ashift
		}
		phys = max(phys, d.ID.PhysicalSector, d.ID.LogicalSector)
	}
	return AshiftFor(phys), phys
}

func (s *inspector) checkAshift() {
	want, phys := s.diskAshift()
	if len(s.in.Disks) == 0 {
		return
	}
	switch {
	case s.p.Ashift != 0 && s.p.Ashift < want:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Fail,
			Reason: fmt.Sprintf("ashift=%d is below the disks' %d-byte physical sectors (ashift %d): every write would be a read-modify-write, and ashift cannot be changed later", s.p.Ashift, phys, want),
			Fix:    fmt.Sprintf("use ashift %d, or leave ashift out", want)})
	case s.p.Ashift != 0:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("ashift=%d as planned (disks' physical sectors %d bytes need %d)", s.p.Ashift, phys, want)})
	case phys < 4096:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("physical sectors %d bytes → ashift=%d all the same: disks bought as replacements will have 4K sectors, and ashift cannot be changed later", phys, want)})
	default:
		s.add(CheckResult{Check: "ashift", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("physical sectors %d bytes → ashift=%d", phys, want)})
	}
}

// CPUHasAES reads /proc/cpuinfo: x86 "flags" or ARM "Features" with aes.
// known is false when neither line is present.
func CPUHasAES(cpuinfo []byte) (has, known bool) {
	for _, l := range strings.Split(string(cpuinfo), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k != "flags" && k != "Features" {
			continue
		}
		known = true
		for _, f := range strings.Fields(v) {
			if f == "aes" {
				return true, true
			}
		}
	}
	return false, known
}

func (s *inspector) checkAES() {
	data, err := s.h.ReadFile("/proc/cpuinfo")
	has, known := CPUHasAES(data)
	switch {
	case err != nil || !known:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Warn, Reason: "cannot tell from /proc/cpuinfo whether the CPU has AES instructions", Fix: "check `grep -wm1 aes /proc/cpuinfo`; without AES, native ZFS encryption is very slow"})
	case !has:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Warn,
			Reason: "the CPU has no AES instructions (no aes in /proc/cpuinfo): native ZFS encryption has run at about 10 MB/s on such boards (Raspberry Pi 4, CM4), far below what the disks can do",
			Fix:    "leave the pool unencrypted, encrypt only the datasets that need it, or use a board with AES (most ARMv8.2+ SoCs, any x86 since ~2010)"})
	default:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Pass, Reason: "the CPU has AES instructions: encryption costs little"})
	}
}

func (s *inspector) checkKeyFile() {
	e := s.p.Encryption
	if e.Keyformat == KeyPassphrase {
		s.add(CheckResult{Check: "key-file", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("passphrase: you will type it now and after every boot (zfs load-key -r %s); nothing unlocks the pool unattended", s.p.Pool)})
		return
	}
	kf := s.p.keyFile()
	if exists(s.h, kf) {
		s.add(CheckResult{Check: "key-file", Subject: kf, Status: Fail,
			Reason: kf + " exists: it may be the key of another pool, and zwatch never overwrites a key",
			Fix:    "move it somewhere safe if it is unused, or set encryption.key_file to a new path"})
		return
	}
	dir := filepath.Dir(kf)
	if st, err := os.Stat(filepath.Join(s.h.Root(), dir)); err == nil && st.Mode().Perm()&0o077 != 0 {
		s.add(CheckResult{Check: "key-file", Subject: dir, Status: Warn,
			Reason: fmt.Sprintf("%s is readable by others (mode %04o): the plan sets it to 0700", dir, st.Mode().Perm())})
	} else {
		s.add(CheckResult{Check: "key-file", Subject: kf, Status: Pass, Reason: kf + " will be generated: 32 random bytes, mode 0600"})
	}
	if s.p.wantUnit() {
		cur, err := s.h.ReadFile(UnitPath)
		switch {
		case err != nil:
		case string(cur) == LoadKeyUnit:
			s.unitPresent = true
		default:
			s.unitPresent = true
			s.add(CheckResult{Check: "systemd-unit", Subject: UnitPath, Status: Warn,
				Reason: UnitPath + " exists with other content: zwatch leaves it alone",
				Fix:    "compare it with the unit zwatch prints (zwatch provision --plan-only) and make sure it loads keys before zfs-mount.service"})
		}
	}
}

// finalPlan makes the resolved plan: by-id names, ashift, autotrim and the
// default properties explicit.
func (s *inspector) finalPlan(names map[string]string) *Plan {
	rp := s.p.clone()
	rp.rename(names)
	rp.Wipe = append([]WipeTarget(nil), s.wipe...)
	rp.unitPresent = s.unitPresent
	if rp.Ashift == 0 {
		rp.Ashift, _ = s.diskAshift()
	}
	if rp.PoolProperties == nil {
		rp.PoolProperties = map[string]string{}
	}
	if _, set := rp.PoolProperties["autotrim"]; !set {
		allSSD := len(s.in.Disks) > 0
		for _, d := range s.in.Disks {
			if (d.Ref.Class == "data" || d.Ref.Class == "special") && d.ID.RotationRPM != 0 {
				allSSD = false
			}
		}
		if allSSD {
			rp.PoolProperties["autotrim"] = "on"
		}
	}
	ApplyDefaults(rp)
	rp.Resolved = true
	return rp
}

// ApplyDefaults sets today's defaults on the root dataset where the plan is
// silent: compression=lz4, atime=off, xattr=sa, acltype=posixacl.
func ApplyDefaults(p *Plan) {
	if p.Properties == nil {
		p.Properties = map[string]string{}
	}
	for k, v := range defaultRootProps {
		if _, set := p.Properties[k]; !set {
			p.Properties[k] = v
		}
	}
}

func (s *inspector) summary() string {
	var sizes []uint64
	for _, v := range s.p.Vdevs {
		ds := s.vdevDisks(v)
		if len(ds) != len(v.Disks) {
			return ""
		}
		for _, d := range ds {
			sizes = append(sizes, d.ID.SizeBytes)
		}
	}
	return LayoutSummary(s.p.Vdevs, sizes)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
