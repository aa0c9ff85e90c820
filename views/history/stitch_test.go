package history

import "testing"

// In steady state (raw points for the last 7 days from mid-hour, hourly
// for 30 days from mid-day, daily before) the stitched points follow each
// other without overlap or gap: days up to the first whole day of the
// hourly tier, hours up to the first whole hour of the raw tier.
func TestStitchSteadyState(t *testing.T) {
	const day, hour = 86400, 3600
	now := int64(400 * day)
	tiers := map[string][]point{}
	for d := int64(0); d < 399; d++ {
		tiers[TierDay] = append(tiers[TierDay], point{T: d * day, Period: day})
	}
	for h := now - 30*day + 5*hour; h < now-hour; h += hour {
		tiers[TierHour] = append(tiers[TierHour], point{T: h, Period: hour})
	}
	for r := now - 7*day + 1800 + 120; r < now; r += 300 {
		tiers[TierRaw] = append(tiers[TierRaw], point{T: r})
	}
	first := func(tier string) *point { return &tiers[tier][0] }
	rawCut, hourCut := cuts(first(TierRaw), first(TierHour))
	if hourCut != now-29*day || rawCut != now-7*day+hour {
		t.Fatalf("cuts at day %v and hour %v", float64(hourCut)/day, float64(rawCut)/hour)
	}
	out := stitch(tiers, rawCut, hourCut)
	counts := map[int32]int{}
	for i, p := range out {
		counts[p.Period]++
		if i == 0 {
			continue
		}
		prev := out[i-1]
		end := prev.T + int64(prev.Period)
		if prev.Period == 0 {
			end = prev.T
		}
		if p.T < end {
			t.Fatalf("point at %d overlaps the one at %d (period %d)", p.T, prev.T, prev.Period)
		}
		if prev.Period > 0 && p.T != end && !(p.Period == 0 && p.T-end < 300) {
			t.Fatalf("gap between %d (period %d) and %d", prev.T, prev.Period, p.T)
		}
	}
	if counts[day] != 371 || counts[hour] != 22*24+1 || counts[0] != 2004 {
		t.Errorf("points by period %v", counts)
	}
}

// A store younger than a day (raw points for 12 h, the hourly aggregates
// they closed, no daily one yet) shows all of it: the hourly aggregates of
// the first partial hour, then the raw points, none overlapping.
func TestStitchYoungStore(t *testing.T) {
	const hour = 3600
	start := int64(400*86400 + 10*hour + 180) // 10:03
	tiers := map[string][]point{}
	for r := start; r < start+12*hour; r += 1800 {
		tiers[TierRaw] = append(tiers[TierRaw], point{T: r})
	}
	for h := periodStart(start, hour); h+hour <= start+12*hour; h += hour {
		tiers[TierHour] = append(tiers[TierHour], point{T: h, Period: hour})
	}
	rawCut, hourCut := cuts(&tiers[TierRaw][0], &tiers[TierHour][0])
	out := stitch(tiers, rawCut, hourCut)
	if len(out) != 1+22 || out[0].Period != hour || out[0].T != periodStart(start, hour) || out[1].Period != 0 || out[1].T < out[0].T+hour {
		t.Fatalf("%d points, first %+v, second %+v; want the first hour's aggregate then 22 raw points", len(out), out[0], out[1])
	}
	// Without any aggregate yet (the first hour still open), the raw points alone.
	rawCut, hourCut = cuts(&tiers[TierRaw][0], nil)
	out = stitch(map[string][]point{TierRaw: tiers[TierRaw][:2]}, rawCut, hourCut)
	if len(out) != 2 {
		t.Fatalf("%d points of the first open hour, want 2", len(out))
	}
}
