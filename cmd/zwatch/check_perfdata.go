package main

import (
	"path"
	"sort"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/rules"
)

// checkFacts is the newest fact of each kind the check judged: what its
// status line counts and its performance data measures.
type checkFacts struct {
	status   *facts.StatusData
	capacity *facts.CapacityData
	// disks are the SMART reports, one per disk (the newest), by label.
	disks []*smart.Report
}

// readFacts decodes the facts the rules were given.
func readFacts(envs []bus.Envelope) (checkFacts, error) {
	var f checkFacts
	byDisk := map[string]*smart.Report{}
	reads := checkHandlers(byDisk)
	for _, env := range envs {
		kind, _ := facts.KindOfSchema(env.Schema)
		if h, ok := reads.Lookup(kind); ok {
			if err := h.Handle(&f, env); err != nil {
				return f, err
			}
		}
	}
	for _, r := range byDisk {
		f.disks = append(f.disks, r)
	}
	sort.Slice(f.disks, func(i, j int) bool { return diskName(f.disks[i]) < diskName(f.disks[j]) })
	return f, nil
}

// checkHandlers are the kinds of fact the check measures; SMART reports go
// to byDisk, the newest of each disk last.
func checkHandlers(byDisk map[string]*smart.Report) *facts.Handlers[*checkFacts] {
	var hs facts.Handlers[*checkFacts]
	facts.OnPart(&hs, facts.ZpoolStatus, func(f *checkFacts, _ bus.Envelope, d *statusWithoutFiles) error {
		f.status = &facts.StatusData{Source: d.Source}
		for _, p := range d.Pools {
			if p.Pool != nil {
				f.status.Pools = append(f.status.Pools, p.Pool)
			}
		}
		return nil
	})
	facts.On(&hs, facts.ZpoolCapacity, func(f *checkFacts, _ bus.Envelope, d *facts.CapacityData) error {
		f.capacity = d
		return nil
	})
	facts.On(&hs, facts.Smart, func(_ *checkFacts, _ bus.Envelope, r *smart.Report) error {
		byDisk[diskName(r)] = r
		return nil
	})
	return &hs
}

// statusWithoutFiles is a zpool.status fact read without the files its
// data errors list: nothing here needs them, and a damaged pool can list
// millions (the rules have read them already).
type statusWithoutFiles struct {
	Source string `json:"source"`
	Pools  []struct {
		*zfs.Pool
		// Shallower than Pool.DataErrors, so it takes the JSON object,
		// which is then skipped rather than kept.
		DataErrors struct{} `json:"data_errors"`
	} `json:"pools"`
}

// diskName names a disk as the SMART rules label it: its serial, else its device.
func diskName(r *smart.Report) string {
	if r.Serial != "" {
		return r.Serial
	}
	return r.Device
}

// The rules raise their alerts at or above a level, while a bare range N
// in performance data alerts above N: for whole numbers (error counters,
// sectors, °C) the level L is written as L-1, which alerts at exactly the
// same readings. A pool's fullness is a fraction, so its levels stay as
// configured (the rule fires at the level itself, the range just above it).
func atOrAbove(level *float64) *float64 {
	if level == nil {
		return nil
	}
	return num(*level - 1)
}

// perfData measures what the rules judge, with the rules' levels from the
// config: per pool its fullness (PoolCapacity), fragmentation, error
// counters and scrub age (ScrubOverdue); per top-level vdev its error
// counters (VdevErrors warns at the first error); per disk its temperature
// (SmartTemperature) and its reallocated and pending sectors, or an NVMe
// drive's media errors (SmartAttribute, NVMeMediaErrors).
func perfData(f checkFacts, cfg *config.RulesConfig, now time.Time) []perfDatum {
	var out []perfDatum
	if f.capacity != nil {
		capLevels := rules.CapacityLevels(cfg)
		for i := range f.capacity.Pools {
			p := &f.capacity.Pools[i]
			out = append(out, perfDatum{Label: perfLabel(p.Name, "capacity"), UOM: "%",
				Value: rules.PoolFullness(p, f.capacity.Datasets),
				Warn:  capLevels.Warning, Crit: capLevels.Critical, Min: num(0), Max: num(100)})
			if p.FragmentPct != nil {
				out = append(out, perfDatum{Label: perfLabel(p.Name, "fragmentation"), UOM: "%", Value: *p.FragmentPct, Min: num(0), Max: num(100)})
			}
		}
	}
	if f.status != nil {
		for _, p := range f.status.Pools {
			out = append(out, poolPerf(p, cfg, now)...)
		}
	}
	for _, r := range f.disks {
		out = append(out, diskPerf(r, cfg)...)
	}
	return out
}

// errorCounters are a vdev's READ, WRITE and CKSUM counters as performance
// data; VdevErrors warns at the first error.
func errorCounters(name string, v *zfs.Vdev, cfg *config.RulesConfig) []perfDatum {
	warn := atOrAbove(rules.VdevErrorLevels(cfg).Warning)
	return []perfDatum{
		{Label: perfLabel(name, "read_errors"), Value: float64(v.ReadErrors), UOM: "c", Warn: warn, Min: num(0)},
		{Label: perfLabel(name, "write_errors"), Value: float64(v.WriteErrors), UOM: "c", Warn: warn, Min: num(0)},
		{Label: perfLabel(name, "checksum_errors"), Value: float64(v.ChecksumErrors), UOM: "c", Warn: warn, Min: num(0)},
	}
}

func poolPerf(p *zfs.Pool, cfg *config.RulesConfig, now time.Time) []perfDatum {
	var out []perfDatum
	if p.Root != nil {
		out = append(out, errorCounters(p.Name, p.Root, cfg)...)
	}
	if s := p.Scan; s.Function == zfs.ScanScrub && s.State == zfs.ScanStateFinished && s.End != nil {
		// ScrubOverdue fires when the age is above max_age: the range as is.
		out = append(out, perfDatum{Label: perfLabel(p.Name, "scrub_age"), UOM: "s",
			Value: now.Sub(*s.End).Truncate(time.Second).Seconds(), Warn: rules.ScrubAgeLevels(cfg).Warning, Min: num(0)})
	}
	// Top-level vdevs, not every disk: a 12-disk pool would otherwise fill
	// the 8 KiB Nagios reads of a plugin's output; a disk's own errors page
	// through its alerts, and its SMART counters are measured below. Spares
	// hold no data: one in use is counted in the vdev it stands in.
	used := map[string]bool{}
	for _, cv := range p.AllVdevs() {
		if cv.Class == "spares" {
			continue
		}
		name := p.Name + "/" + path.Base(cv.Vdev.Name)
		if used[name] {
			name = p.Name + "/" + cv.Vdev.Name
		}
		if used[name] {
			continue // the same device listed twice
		}
		used[name] = true
		out = append(out, errorCounters(name, cv.Vdev, cfg)...)
	}
	return out
}

func diskPerf(r *smart.Report, cfg *config.RulesConfig) []perfDatum {
	var out []perfDatum
	name := diskName(r)
	if r.TemperatureC != nil {
		d := perfDatum{Label: perfLabel(name, "temperature"), Value: float64(*r.TemperatureC)}
		if l, ok := rules.TemperatureLevels(cfg, r); ok {
			d.Warn, d.Crit = atOrAbove(l.Warning), atOrAbove(l.Critical)
		}
		out = append(out, d)
	}
	for _, a := range []struct {
		id   int
		what string
	}{{5, "reallocated_sectors"}, {197, "pending_sectors"}} {
		if v, l, ok := rules.SmartCounter(cfg, r, a.id); ok {
			out = append(out, perfDatum{Label: perfLabel(name, a.what), Value: float64(v),
				Warn: atOrAbove(l.Warning), Crit: atOrAbove(l.Critical), Min: num(0)})
		}
	}
	if r.NVMe != nil {
		l := rules.NVMeMediaErrorLevels(cfg)
		out = append(out, perfDatum{Label: perfLabel(name, "media_errors"), Value: float64(r.NVMe.MediaErrors), UOM: "c",
			Warn: atOrAbove(l.Warning), Crit: atOrAbove(l.Critical), Min: num(0)})
	}
	return out
}
