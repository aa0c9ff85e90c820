package provision

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/units"
)

// binSize prints a block size as ZFS does: 512, 4K, 128K, 1M.
func binSize(b uint64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprintf("%d", b)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// LayoutSummary says what the data vdevs give: "raidz2 of 6 × 4 TB: 16 TB
// usable, survives any 2 disk failures". sizes are the disk sizes in vdev
// order. Usable is before ZFS's own overhead (slop space, metadata: a few
// per cent).
func LayoutSummary(vdevs []VdevSpec, sizes []uint64) string {
	if len(vdevs) == 0 {
		return ""
	}
	var usable uint64
	tol := -1
	i := 0
	var smallest uint64
	for _, v := range vdevs {
		if i+len(v.Disks) > len(sizes) {
			return ""
		}
		lo := sizes[i]
		for _, s := range sizes[i : i+len(v.Disks)] {
			lo = min(lo, s)
		}
		i += len(v.Disks)
		if smallest == 0 || lo < smallest {
			smallest = lo
		}
		par := parityOf(v.Layout, len(v.Disks))
		if v.Layout == LayoutMirror {
			usable += lo
		} else {
			usable += uint64(len(v.Disks)-par) * lo
		}
		if tol < 0 || par < tol {
			tol = par
		}
	}
	v := vdevs[0]
	shape := fmt.Sprintf("%s of %d × %s", v.Layout, len(v.Disks), units.Decimal(smallest))
	if len(vdevs) > 1 {
		shape = fmt.Sprintf("%d × %s", len(vdevs), shape)
	}
	fails := "survives any " + plural(tol, "disk failure", "disk failures")
	if tol == 0 {
		fails = "survives no disk failure"
	}
	if len(vdevs) > 1 && tol > 0 {
		fails += fmt.Sprintf(" (up to %d in each of the %d vdevs)", tol, len(vdevs))
	}
	return fmt.Sprintf("%s: %s usable, %s", shape, units.Decimal(usable), fails)
}

// RaidzAlloc is how raidz stores one block: data and parity sectors and
// the padding that rounds the allocation to a multiple of parity+1.
type RaidzAlloc struct {
	Data, Parity, Padding int
}

// Total is every sector the block takes.
func (a RaidzAlloc) Total() int { return a.Data + a.Parity + a.Padding }

// Efficiency is the share of the allocation holding data.
func (a RaidzAlloc) Efficiency() float64 {
	if a.Total() == 0 {
		return 0
	}
	return float64(a.Data) / float64(a.Total())
}

// RaidzAllocation computes raidz's allocation of one block of size bytes on
// a vdev of width disks with parity, at ashift (vdev_raidz_asize): parity
// sectors per row of width-parity data sectors, total rounded up to a
// multiple of parity+1.
func RaidzAllocation(size uint64, width, parity, ashift int) RaidzAlloc {
	sector := uint64(1) << ashift
	d := int((size + sector - 1) / sector)
	if width <= parity || d == 0 {
		return RaidzAlloc{}
	}
	rows := (d + width - parity - 1) / (width - parity)
	p := rows * parity
	total := d + p
	if r := total % (parity + 1); r != 0 {
		total += parity + 1 - r
	}
	return RaidzAlloc{Data: d, Parity: p, Padding: total - d - p}
}

// datasetNames are the root dataset and every planned dataset, full names.
func (p *Plan) datasetNames() []string {
	out := []string{""}
	for _, d := range p.Datasets {
		out = append(out, d.Name)
	}
	return out
}

func (p *Plan) fullName(rel string) string {
	if rel == "" {
		return p.Pool
	}
	return p.Pool + "/" + rel
}

// SpaceTraps warns about settings that waste space: a large recordsize
// without compression (the last record of every file is stored whole), and
// small blocks on raidz (parity and padding sectors eat the space).
func SpaceTraps(p *Plan) []CheckResult {
	var out []CheckResult
	ashift := p.Ashift
	if ashift == 0 {
		ashift = 12
	}
	for _, ds := range p.datasetNames() {
		name := p.fullName(ds)
		rsText := p.effective(ds, "recordsize")
		rs, ok := ParseSize(rsText)
		if !ok {
			continue
		}
		comp := p.effective(ds, "compression")
		if comp == "off" && rs > 128<<10 {
			file := rs + rs/10
			records := (file + rs - 1) / rs
			eff := float64(file) / float64(records*rs)
			out = append(out, CheckResult{Check: "space", Subject: name, Status: Warn,
				Reason: fmt.Sprintf("recordsize=%s with compression=off: a file's last record is stored whole, so a %.1f MiB file takes %d records of %s (%.0f %% efficient)",
					binSize(rs), float64(file)/(1<<20), records, binSize(rs), eff*100),
				Fix: "set compression=lz4 (or zstd-1): the zeros padding the last record compress away, and already-compressed files (photos, video) cost nothing extra"})
		}
		if len(p.Vdevs) == 0 || !strings.HasPrefix(p.Vdevs[0].Layout, "raidz") {
			continue
		}
		v := p.Vdevs[0]
		w, par := len(v.Disks), parityOf(v.Layout, len(v.Disks))
		ideal := float64(w-par) / float64(w)
		a := RaidzAllocation(rs, w, par, ashift)
		if a.Efficiency() >= 0.9*ideal {
			continue
		}
		better := ""
		for s := rs * 2; s <= 16<<20; s *= 2 {
			if RaidzAllocation(s, w, par, ashift).Efficiency() >= 0.9*ideal {
				better = binSize(s)
				break
			}
		}
		fix := "use mirrors for small-block data (VM images, databases)"
		if better != "" {
			fix = fmt.Sprintf("use recordsize=%s or larger here, or mirrors for small-block data (VM images, databases)", better)
		}
		out = append(out, CheckResult{Check: "space", Subject: name, Status: Warn,
			Reason: fmt.Sprintf("recordsize=%s on %s of %d disks at ashift %d: each %s block takes %d data + %d parity + %d padding sectors, so %.0f %% of the space holds data, not the %.0f %% the layout promises",
				binSize(rs), v.Layout, w, ashift, binSize(rs), a.Data, a.Parity, a.Padding, a.Efficiency()*100, ideal*100),
			Fix: fix})
	}
	return out
}
