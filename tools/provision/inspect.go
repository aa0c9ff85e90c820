package provision

import (
	"context"
	"strings"

	"github.com/zwatch/zwatch/model/disk"
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

// inspector carries one Inspect run: what the checks read (the plan, the
// host, the resolved disks) and what they add to (the results, the wipe
// list).
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
	s.runChecks(preflightChecks())
	if names != nil {
		s.in.Plan = s.finalPlan(names)
		s.in.Checks = append(s.in.Checks, SpaceTraps(s.in.Plan)...)
	}
	s.in.Summary = s.summary()
	return s.in, nil
}

// diskOf is the resolved disk the plan names name, nil when it did not
// resolve.
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

// vdevDisks are the resolved disks of v, in plan order; unresolved ones
// are left out.
func (s *inspector) vdevDisks(v VdevSpec) []*DiskInfo {
	var out []*DiskInfo
	for _, n := range v.Disks {
		if d := s.diskOf(n); d != nil {
			out = append(out, d)
		}
	}
	return out
}

// devOf is how the whole disk is named in commands.
func devOf(id disk.Identity) string {
	if id.ByID != "" {
		return id.ByID
	}
	return "/dev/" + id.Kernel
}

// describe names a disk for a person: its model and serial number.
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

// summary is the layout in words, "" until every data disk resolved.
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
