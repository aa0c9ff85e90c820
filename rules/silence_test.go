package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/rules/internal/rulestest"
	"github.com/zwatch/zwatch/silence"
)

// raidz2 is rulestest's pool, with the step these tests take.
type raidz2 struct{ *rulestest.Raidz2 }

func newRaidz2(t testing.TB) *raidz2 { return &raidz2{rulestest.NewRaidz2(t)} }

// step observes the pool with n disks failed at now and returns what is sent.
func (r *raidz2) step(t *testing.T, e *Engine, n int, now time.Time) []string {
	t.Helper()
	observe(t, e, poolsEnv(t, r.Fail(n), now), now)
	return noteLines(e.Tick(now))
}

// tickSpan ticks from from to to, every 30 s over an hour or less, else
// every 10 minutes, and returns what is sent.
func tickSpan(e *Engine, from, to time.Time) []string {
	step := 30 * time.Second
	if to.Sub(from) > time.Hour {
		step = 10 * time.Minute
	}
	var out []string
	for now := from; !now.After(to); now = now.Add(step) {
		out = append(out, noteLines(e.Tick(now))...)
	}
	return out
}

// A silence of pool tank up to warning: the DEGRADED pool's warnings are
// not sent; when a second disk fails the critical rise is, and only it;
// when the pool is repaired, only the alerts that were paged get their
// resolved notice (never a "resolved" without its page).
func TestSilenceMutesWarningsButNotARise(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	e.SetSilences([]silence.Silence{newSilence(t, "pool=tank", t0, t0.Add(7*24*time.Hour), alert.Warning)})

	sent := r.step(t, e, 1, t0.Add(time.Second))
	sent = append(sent, tickSpan(e, t0.Add(2*time.Second), t0.Add(time.Hour))...)
	if len(sent) != 0 {
		t.Fatalf("silenced warnings were sent:\n%s", strings.Join(sent, "\n"))
	}
	if got := active(e, nameVdevState, nameRedundancy); len(got) != 2 {
		t.Fatalf("the alerts still fire (silenced, not gone): %v", got)
	}

	now := t0.Add(2 * time.Hour)
	sent = append(r.step(t, e, 2, now), tickSpan(e, now, now.Add(time.Minute))...)
	sameList(t, sentNames(sent), []string{
		"firing critical RedundancyMargin", "firing critical VdevState", "firing critical VdevState",
	})

	now = now.Add(time.Hour)
	sent = append(r.step(t, e, 0, now), tickSpan(e, now, now.Add(time.Minute))...)
	sameList(t, sentNames(sent), []string{
		"resolved critical RedundancyMargin", "resolved critical VdevState", "resolved critical VdevState",
	})
}

// --any-severity (MaxSeverity critical): the rise is silenced too.
func TestSilenceAnySeverityMutesTheRise(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	e.SetSilences([]silence.Silence{newSilence(t, "pool=tank", t0, t0.Add(24*time.Hour), alert.Critical)})
	sent := append(r.step(t, e, 1, t0.Add(time.Second)), r.step(t, e, 2, t0.Add(time.Minute))...)
	sent = append(sent, tickSpan(e, t0.Add(time.Minute), t0.Add(2*time.Hour))...)
	if len(sent) != 0 {
		t.Fatalf("sent under a silence of any severity:\n%s", strings.Join(sent, "\n"))
	}
}

// Alerts paged before the silence: no repeat while it lasts, and their
// resolved notice is sent (the person saw the page).
func TestSilenceAfterThePage(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	first := r.step(t, e, 1, t0.Add(time.Second))
	if len(first) == 0 {
		t.Fatal("no page before the silence")
	}
	e.SetSilences([]silence.Silence{newSilence(t, "pool=tank", t0.Add(time.Minute), t0.Add(7*24*time.Hour), alert.Warning)})
	// A warning repeats every 24 h; not while silenced.
	if sent := tickSpan(e, t0.Add(2*time.Second), t0.Add(49*time.Hour)); len(sent) != 0 {
		t.Fatalf("repeats sent while silenced:\n%s", strings.Join(sent, "\n"))
	}
	now := t0.Add(50 * time.Hour)
	sent := append(r.step(t, e, 0, now), tickSpan(e, now, now.Add(time.Minute))...)
	// ScrubOverdue still holds: it stays silenced.
	sameList(t, sentNames(sent), []string{
		"resolved warning PoolState", "resolved warning RedundancyMargin", "resolved warning VdevState",
	})
}

// A silence of one alert name takes that alert out of its group's page;
// the others of the group go out as usual.
func TestSilenceLeavesTheRestOfTheGroup(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	e.SetSilences([]silence.Silence{newSilence(t, "ScrubOverdue host=nas1", t0, t0.Add(time.Hour), alert.Warning)})
	sent := append(r.step(t, e, 1, t0.Add(time.Second)), tickSpan(e, t0.Add(2*time.Second), t0.Add(time.Minute))...)
	sameList(t, sentNames(sent), []string{
		"firing warning PoolState", "firing warning RedundancyMargin", "firing warning VdevState",
	})
}

// When the silence ends, what it held back and still fires is sent: a page
// never sent goes at once. The notice names it.
func TestSilenceExpiryLetsThePageThrough(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	end := t0.Add(time.Hour)
	s := newSilence(t, "alertname=~Vdev.*|RedundancyMargin", t0, end, alert.Warning)
	e.SetSilences([]silence.Silence{s})
	sent := append(r.step(t, e, 1, t0.Add(time.Second)), tickSpan(e, t0.Add(2*time.Second), end.Add(-time.Second))...)
	sameList(t, sentNames(sent), []string{"firing warning PoolState", "firing warning ScrubOverdue"})

	n := e.ExpiryNotice(&s, "", end)
	want := "silence " + s.ID[:8] + ` for alertname=~"Vdev.*|RedundancyMargin" expired; alerts that still fire page again: ` +
		"RedundancyMargin on nas1 (pool=tank, vdev=raidz2-0), VdevState on nas1 (pool=tank, vdev=sde)"
	if len(n.Alerts) != 1 || n.Alerts[0].Summary != want || n.Alerts[0].Severity != alert.Info || n.Host != testHost || n.ID != ExpiryNoticeID(s.ID) {
		t.Errorf("notice %+v\nwant summary %q", n, want)
	}
	sent = tickSpan(e, end, end.Add(time.Minute))
	sameList(t, sentNames(sent), []string{"firing warning RedundancyMargin", "firing warning VdevState"})
}

// A silence that names the pool and severity a disk alert was joined to
// mutes it, while the silence is active (silence.TestLabel has the labels).
func TestSilenceLabels(t *testing.T) {
	tr := &tracked{A: alert.Alert{Name: "SmartFailed", Severity: alert.Critical, State: alert.Firing,
		Labels: map[string]string{"alertname": "SmartFailed", "host": "nas1", "disk": "WD-1"}}, Pool: "tank", Serial: "WD-1"}
	e := newTestEngine()
	e.SetSilences([]silence.Silence{newSilence(t, "pool=tank severity=critical", t0, t0.Add(time.Hour), alert.Critical)})
	if e.silencedBy(tr, t0.Add(time.Minute)) == nil {
		t.Error("pool=tank severity=critical does not silence a critical SMART alert of a disk in tank")
	}
	if e.silencedBy(tr, t0.Add(time.Hour)) != nil {
		t.Error("silenced at its end")
	}
	if e.silencedBy(tr, t0.Add(-time.Minute)) != nil {
		t.Error("silenced before its start (pending)")
	}
}

// After the silence, alerts paged before it repeat by the usual rule: a
// warning whose 24 h passed during the silence repeats when it ends, then
// every 24 h.
func TestSilenceExpiryRepeatsByTheUsualRule(t *testing.T) {
	r := newRaidz2(t)
	e := newTestEngine()
	observe(t, e, poolsEnv(t, r.Fail(0), t0), t0)
	if len(r.step(t, e, 1, t0.Add(time.Second))) == 0 {
		t.Fatal("no page before the silence")
	}
	end := t0.Add(30 * time.Hour)
	e.SetSilences([]silence.Silence{newSilence(t, "alertname=VdevState", t0.Add(time.Minute), end, alert.Warning)})
	var at []time.Time
	for now := t0.Add(10 * time.Minute); now.Before(t0.Add(60 * time.Hour)); now = now.Add(10 * time.Minute) {
		for _, n := range e.Tick(now) {
			for _, a := range n.Alerts {
				if a.Name == nameVdevState {
					at = append(at, now)
				}
			}
		}
	}
	want := []time.Time{end, end.Add(24 * time.Hour)}
	if len(at) != 2 || !at[0].Equal(want[0]) || !at[1].Equal(want[1]) {
		t.Errorf("VdevState sent at %v, want %v", at, want)
	}
}
