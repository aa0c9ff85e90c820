package zfs

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseArcstats parses Linux /proc/spl/kstat/zfs/arcstats: a kstat header
// line, a "name type data" line, then one "name type value" line per
// statistic. Non-numeric values are skipped.
func ParseArcstats(r io.Reader) (map[string]uint64, error) {
	lr := newLineReader(r)
	out := map[string]uint64{}
	sawHeader := false
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "name" && f[1] == "type" && f[2] == "data" {
			sawHeader = true
			continue
		}
		if len(f) != 3 {
			continue // the kstat header line, or damage
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		if v, ok := kstatValue(f[2]); ok {
			out[f[0]] = v
		}
	}
	if err := lr.readErr(); err != nil {
		return nil, fmt.Errorf("zfs: reading arcstats: %w", err)
	}
	if len(out) == 0 {
		if !sawHeader {
			return nil, errors.New("zfs: input is not an arcstats kstat")
		}
		return nil, errors.New("zfs: arcstats has no values")
	}
	return out, nil
}

// kstatValue reads a counter; negative int64 kstats are clamped to zero.
func kstatValue(s string) (uint64, bool) {
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return 0, true
	}
	return 0, false
}

// arcSysctlPrefix starts every line of FreeBSD `sysctl kstat.zfs.misc.arcstats`.
const arcSysctlPrefix = "kstat.zfs.misc.arcstats."

// ParseArcSysctl parses FreeBSD `sysctl kstat.zfs.misc.arcstats` output
// ("kstat.zfs.misc.arcstats.hits: 123") into the same names as arcstats.
func ParseArcSysctl(r io.Reader) (map[string]uint64, error) {
	lr := newLineReader(r)
	out := map[string]uint64{}
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), arcSysctlPrefix)
		if !ok {
			continue
		}
		name, val, ok := strings.Cut(rest, ":")
		if !ok || name == "" {
			continue
		}
		if v, ok := kstatValue(strings.TrimSpace(val)); ok {
			out[name] = v
		}
	}
	if err := lr.readErr(); err != nil {
		return nil, fmt.Errorf("zfs: reading arcstats sysctl: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("zfs: input has no kstat.zfs.misc.arcstats values")
	}
	return out, nil
}

// ARCFrom fills an ARC reading from cur. With prev (an earlier reading) it
// also computes the hit ratios over the interval; a counter that went down
// means the module was reloaded, so that interval gets no ratio.
func ARCFrom(cur, prev map[string]uint64) ARC {
	a := ARC{
		SizeBytes:           cur["size"],
		TargetBytes:         cur["c"],
		MinBytes:            cur["c_min"],
		MaxBytes:            cur["c_max"],
		Hits:                cur["hits"],
		Misses:              cur["misses"],
		DemandDataHits:      cur["demand_data_hits"],
		DemandDataMisses:    cur["demand_data_misses"],
		DemandMetadataHits:  cur["demand_metadata_hits"],
		DemandMetadataMiss:  cur["demand_metadata_misses"],
		PrefetchDataHits:    cur["prefetch_data_hits"],
		PrefetchDataMisses:  cur["prefetch_data_misses"],
		L2SizeBytes:         cur["l2_size"],
		L2Hits:              cur["l2_hits"],
		L2Misses:            cur["l2_misses"],
		MemoryThrottleCount: cur["memory_throttle_count"],
	}
	if prev == nil {
		return a
	}
	d := func(k string) (uint64, bool) {
		c, p := cur[k], prev[k]
		if c < p {
			return 0, false
		}
		return c - p, true
	}
	a.HitRatio = ratio(d, []string{"hits"}, []string{"misses"})
	a.DemandHitRatio = ratio(d,
		[]string{"demand_data_hits", "demand_metadata_hits"},
		[]string{"demand_data_misses", "demand_metadata_misses"})
	a.L2HitRatio = ratio(d, []string{"l2_hits"}, []string{"l2_misses"})
	if t, ok := d("memory_throttle_count"); ok {
		a.ThrottleDelta = t
	}
	return a
}

// ratio is hits/(hits+misses) over the interval, nil when a counter was
// reset or nothing happened.
func ratio(d func(string) (uint64, bool), hits, misses []string) *float64 {
	var h, m uint64
	for _, k := range hits {
		v, ok := d(k)
		if !ok {
			return nil
		}
		h += v
	}
	for _, k := range misses {
		v, ok := d(k)
		if !ok {
			return nil
		}
		m += v
	}
	if h+m == 0 {
		return nil
	}
	r := float64(h) / float64(h+m)
	return &r
}
