package pipeline

import (
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/silence"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func testCond(name string, sev alert.Severity) Cond {
	return Cond{Name: name, Severity: sev, Labels: map[string]string{"alertname": name, "host": "nas1", "pool": "tank"}, Summary: name}
}

// One condition goes through every stage: pending until its `for`, one
// page when its group flushes, a repeat after its interval, and a
// resolved notice once its condition stops.
func TestStagesInOrder(t *testing.T) {
	p := New(Config{For: map[string]time.Duration{"VdevState": time.Minute}, RepeatWarning: time.Hour,
		GroupBy: []string{"pool"}, GroupWait: 30 * time.Second, GroupInterval: 5 * time.Minute})
	b := NewBook()
	conds := []Cond{testCond("VdevState", alert.Warning)}
	report := func(now time.Time, cs []Cond) []alert.Notification {
		p.Dedup(&b, "status", len(cs), func(i int) Cond { return cs[i] }, Hooks{}, now)
		p.Settle(&b, now)
		out, _ := p.Flush(&b, "nas1", nil, now)
		return out
	}
	if ns := report(t0, conds); len(ns) != 0 {
		t.Fatalf("sent while pending: %+v", ns)
	}
	ns := report(t0.Add(time.Minute), conds)
	if len(ns) != 1 || ns[0].Status != alert.Firing || ns[0].GroupKey != "host=nas1,pool=tank" {
		t.Fatalf("at its `for`: %+v", ns)
	}
	if ns := report(t0.Add(30*time.Minute), conds); len(ns) != 0 {
		t.Fatalf("sent again before its repeat: %+v", ns)
	}
	if ns := report(t0.Add(61*time.Minute), conds); len(ns) != 1 || ns[0].Status != alert.Firing {
		t.Fatalf("no repeat after an hour: %+v", ns)
	}
	ns = report(t0.Add(62*time.Minute), nil)
	if len(ns) != 1 || ns[0].Status != alert.Resolved || len(b.Alerts) != 0 {
		t.Fatalf("resolved: %+v, book %+v", ns, b.Alerts)
	}
}

// An inhibited or silenced alert is not due; one never sent vanishes
// without a resolved notice.
func TestInhibitAndSilenceAreNotDue(t *testing.T) {
	p := New(Config{Inhibit: []InhibitRule{{Source: Matcher{Names: []string{"PoolState"}}, Target: Matcher{Names: []string{"VdevState"}}, Equal: []string{"pool"}}}})
	b := NewBook()
	conds := []Cond{testCond("PoolState", alert.Critical), testCond("VdevState", alert.Warning)}
	p.Dedup(&b, "status", len(conds), func(i int) Cond { return conds[i] }, Hooks{}, t0)
	ms, err := silence.ParseMatchers([]string{"alertname=PoolState"})
	if err != nil {
		t.Fatal(err)
	}
	p.SetSilences([]silence.Silence{{ID: "s1", Matchers: ms, StartsAt: t0, EndsAt: t0.Add(time.Hour), MaxSeverity: alert.Critical}})
	p.Settle(&b, t0)
	if ns, _ := p.Flush(&b, "nas1", nil, t0); len(ns) != 0 {
		t.Fatalf("sent: %+v", ns)
	}
	for _, tr := range b.Alerts {
		if tr.Inhibited != (tr.A.Name == "VdevState") {
			t.Errorf("%s inhibited %v", tr.A.Name, tr.Inhibited)
		}
	}
	p.Dedup(&b, "status", 0, nil, Hooks{}, t0.Add(time.Minute))
	if len(b.Alerts) != 0 {
		t.Errorf("alerts never sent stay after they resolve: %+v", b.Alerts)
	}
}

// A notification carries the timing of the fact that made it due: the
// page that of the fact that raised it, a repeat none (it was told), the
// resolved notice that of the fact that ended it.
func TestNotificationsCarryTheirFactsTiming(t *testing.T) {
	p := New(Config{RepeatWarning: time.Hour})
	b := NewBook()
	conds := []Cond{testCond("VdevState", alert.Warning)}
	report := func(now time.Time, cs []Cond, cause *alert.Timing) []alert.Notification {
		p.Dedup(&b, "status", len(cs), func(i int) Cond { return cs[i] }, Hooks{Cause: cause}, now)
		p.Settle(&b, now)
		out, _ := p.Flush(&b, "nas1", nil, now)
		return out
	}
	raised := &alert.Timing{Event: t0.Add(-2 * time.Second), Read: t0.Add(-time.Second), Judged: t0}
	ns := report(t0, conds, raised)
	if len(ns) != 1 || ns[0].Timing == nil || *ns[0].Timing != *raised || ns[0].Timing == raised {
		t.Fatalf("the page's timing: %+v, want a copy of %+v", ns, raised)
	}
	again := &alert.Timing{Read: t0.Add(time.Minute), Judged: t0.Add(time.Minute)}
	if ns := report(t0.Add(61*time.Minute), conds, again); len(ns) != 1 || ns[0].Timing != nil {
		t.Fatalf("a repeat carries a timing: %+v", ns)
	}
	ended := &alert.Timing{Read: t0.Add(2 * time.Hour), Judged: t0.Add(2 * time.Hour)}
	if ns := report(t0.Add(2*time.Hour), nil, ended); len(ns) != 1 || ns[0].Status != alert.Resolved || ns[0].Timing == nil || *ns[0].Timing != *ended {
		t.Fatalf("the resolved notice's timing: %+v", ns)
	}
	if legs, last := ended.Legs(); len(legs) != 1 || legs[0].Name != "read→judged" || legs[0].Took != 0 || !last.Equal(ended.Judged) {
		t.Errorf("legs %+v, last %s", legs, last)
	}
}
