package provision

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zwatch/zwatch/model/zfs"
)

// fixedAtCreation are properties that cannot be changed once set.
var fixedAtCreation = map[string]bool{
	"normalization": true, "casesensitivity": true, "utf8only": true,
	"encryption": true, "keyformat": true,
}

// PropValue is one line of `zfs get -H -p -o name,property,value`.
type PropValue struct {
	Dataset, Property, Value string
}

// ParseZfsGet reads `zfs get -H -p -o name,property,value` (or zpool get)
// output: tab-separated lines.
func ParseZfsGet(b []byte) []PropValue {
	var out []PropValue
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimRight(l, "\r"), "\t")
		if len(f) != 3 {
			continue
		}
		out = append(out, PropValue{Dataset: f[0], Property: f[1], Value: f[2]})
	}
	return out
}

// sameValue compares a planned value with zfs get -p's: sizes as bytes.
func sameValue(prop, want, got string) bool {
	if want == got {
		return true
	}
	switch prop {
	case "recordsize", "special_small_blocks", "quota", "refquota", "reservation", "refreservation":
		if want == "none" {
			return got == "0" || got == "none"
		}
		w, ok := ParseSize(want)
		g, err := strconv.ParseUint(got, 10, 64)
		return ok && err == nil && w == g
	case "compression":
		return want == "on" && got == "lz4" || want == "lz4" && got == "on"
	case "acltype":
		return (want == "posix" || want == "posixacl") && (got == "posix" || got == "posixacl")
	}
	return false
}

// Comparison is how an existing pool differs from the plan.
type Comparison struct {
	// Plan is the plan with its defaults applied, as compared.
	Plan *Plan
	// Notes are about the pool's health (not ONLINE).
	Notes []string
	// Layout are vdevs planned but not in the pool, or the other way
	// round: a layout cannot be changed in place.
	Layout []string
	// Properties are datasets missing and properties that differ.
	Properties []string
	// Fixes are the zfs create and zfs set commands that bring the datasets
	// in line; nothing destructive.
	Fixes []Step
}

// Matches reports whether the pool is as planned.
func (c *Comparison) Matches() bool {
	return len(c.Layout) == 0 && len(c.Properties) == 0 && len(c.Notes) == 0
}

// compare reads the existing pool and its datasets and compares them with
// the plan. Its errors say what could not be read.
func (r *runner) compare() (*Comparison, error) {
	p := r.opts.Plan.clone()
	ApplyDefaults(p)
	c := &Comparison{Plan: p}
	pool, err := r.status(p.Pool)
	if err != nil {
		return nil, fmt.Errorf("read zpool status -P %s: %w", p.Pool, err)
	}
	c.Layout = r.layoutDiffs(p, pool)
	if pool.State != zfs.StateOnline {
		c.Notes = append(c.Notes, fmt.Sprintf("pool state is %s, not ONLINE: see zpool status %s", pool.State, p.Pool))
	}

	// Properties of the root dataset and every planned dataset.
	props := map[string]bool{"mountpoint": true}
	for k := range p.Properties {
		props[k] = true
	}
	for _, d := range p.Datasets {
		for k := range d.Properties {
			props[k] = true
		}
	}
	if p.Encryption != nil {
		props["encryption"], props["keyformat"], props["keylocation"] = true, true, true
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	out, _, err := runOut(r.ctx, r.opts.Host, "zfs", "get", "-H", "-p", "-o", "name,property,value", "-r", "-t", "filesystem", strings.Join(names, ","), p.Pool)
	if err != nil {
		return nil, fmt.Errorf("read dataset properties: %w", err)
	}
	have := map[string]map[string]string{}
	for _, pv := range ParseZfsGet(out) {
		if have[pv.Dataset] == nil {
			have[pv.Dataset] = map[string]string{}
		}
		have[pv.Dataset][pv.Property] = pv.Value
	}
	check := func(ds string, want map[string]string) {
		got := have[ds]
		for _, k := range sortedKeys(want) {
			if sameValue(k, want[k], got[k]) {
				continue
			}
			if fixedAtCreation[k] {
				c.Properties = append(c.Properties, fmt.Sprintf("%s: %s is %s, plan says %s (fixed at creation: cannot be changed)", ds, k, got[k], want[k]))
				continue
			}
			c.Properties = append(c.Properties, fmt.Sprintf("%s: %s is %s, plan says %s", ds, k, got[k], want[k]))
			c.Fixes = append(c.Fixes, Step{Argv: []string{"zfs", "set", k + "=" + want[k], ds}})
		}
	}
	rootWant := map[string]string{}
	for k, v := range p.Properties {
		rootWant[k] = v
	}
	if p.Mountpoint != "" {
		rootWant["mountpoint"] = p.Mountpoint
	}
	if p.Encryption != nil {
		rootWant["encryption"] = "aes-256-gcm"
		rootWant["keyformat"] = p.Encryption.Keyformat
		if p.Encryption.Keyformat == KeyRaw {
			rootWant["keylocation"] = "file://" + p.keyFile()
		} else {
			rootWant["keylocation"] = "prompt"
		}
	}
	check(p.Pool, rootWant)
	for _, d := range p.Datasets {
		full := p.fullName(d.Name)
		want := map[string]string{}
		for k, v := range d.Properties {
			want[k] = v
		}
		if d.Mountpoint != "" {
			want["mountpoint"] = d.Mountpoint
		}
		if have[full] == nil {
			c.Properties = append(c.Properties, full+": missing")
			argv := []string{"zfs", "create"}
			for _, k := range sortedKeys(d.Properties) {
				argv = append(argv, "-o", k+"="+d.Properties[k])
			}
			if d.Mountpoint != "" {
				argv = append(argv, "-o", "mountpoint="+d.Mountpoint)
			}
			c.Fixes = append(c.Fixes, Step{Argv: append(argv, full)})
			continue
		}
		check(full, want)
	}

	return c, nil
}

// reconcile compares an existing pool with the plan: "already provisioned"
// when they agree; otherwise the differences, and the commands (zfs create,
// zfs set) that bring the datasets in line. The layout is only reported:
// zwatch never destroys or reshapes a pool.
func (r *runner) reconcile(in *Inspection) error {
	r.printf("zwatch provision: pool %s exists; comparing it with the plan (nothing on its disks is touched)\n\n", r.opts.Plan.Pool)
	c, err := r.compare()
	if err != nil {
		r.printf("Could not %v\n", err)
		return err
	}
	p, layoutDiff, fixes := c.Plan, c.Layout, c.Fixes
	if c.Matches() {
		r.printf("Already provisioned: pool %s matches the plan (%s).\n", p.Pool, strings.Join(layoutWords(p), "; "))
		return nil
	}
	if len(layoutDiff) == 0 {
		r.printf("Already provisioned: the layout of pool %s matches the plan. Differences:\n", p.Pool)
	} else {
		r.printf("Pool %s exists with another layout. Differences:\n", p.Pool)
	}
	for _, d := range append(append(append([]string{}, c.Notes...), layoutDiff...), c.Properties...) {
		r.printf("  - %s\n", d)
	}
	if len(layoutDiff) > 0 {
		r.printf("\nA pool's vdev layout cannot be changed in place, and zwatch never destroys a pool. Use another pool name, or change the plan to match.\n")
	}
	if len(fixes) > 0 {
		if r.opts.Apply && len(layoutDiff) == 0 {
			r.printf("\nBringing the datasets in line:\n")
			if err := r.apply(fixes); err != nil {
				return err
			}
			return nil
		}
		r.printf("\nCommands that bring the datasets in line (run with --apply; nothing destructive):\n")
		PrintSteps(r.out, fixes)
	}
	if len(layoutDiff) > 0 {
		return ErrDiffers
	}
	return nil
}
