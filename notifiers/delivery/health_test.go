package delivery

import (
	"testing"
	"time"
)

// The channel's health decides when each queued notification is tried; the
// outbox tests (drain_test.go) prove it against real services, these pin
// the rules themselves.

func TestHealthProbeBackoff(t *testing.T) {
	h := newHealth(time.Second, 4*time.Second)
	began, probeIn := h.failed(time.Now())
	if !began || probeIn < 900*time.Millisecond || probeIn > time.Second {
		t.Fatalf("first failure: began %v, probe in %s; want true, retry_initial", began, probeIn)
	}
	if began, _ := h.failed(time.Now()); began {
		t.Error("a second failure began the failure again")
	}
	h.nextProbe = time.Now() // due now
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if !h.startProbe() {
			t.Fatalf("probe %d not started", i+1)
		}
		if h.startProbe() {
			t.Fatalf("two probes at once")
		}
		next := h.endProbe(true, false)
		if next < want-100*time.Millisecond || next > want {
			t.Errorf("after failed probe %d the next is in %s, want %s (doubling up to retry_max)", i+1, next, want)
		}
		h.nextProbe = time.Now()
	}
	// A probe that asked nothing lets the next start at once.
	h.startProbe()
	if next := h.endProbe(false, false); next > 0 {
		t.Errorf("a probe that sent nothing delayed the next by %s", next)
	}
	// New notification: the backoff starts again from retry_initial.
	h.nextProbe = time.Now().Add(time.Hour)
	h.arrived()
	if wanted, wait, _ := h.untilProbe(); !wanted || wait > time.Second {
		t.Errorf("after a new notification: probe wanted %v in %s, want within retry_initial", wanted, wait)
	}
	// ... also while a probe is in flight: its failure does not push the
	// next one out again.
	h.nextProbe = time.Now()
	h.startProbe()
	h.arrived()
	if next := h.endProbe(true, false); next > time.Second {
		t.Errorf("a probe that failed after a new notification put the next %s away, want within retry_initial", next)
	}
	if recovered, _ := h.succeeded(); !recovered {
		t.Error("a success did not end the failure")
	}
	if wanted, _, _ := h.untilProbe(); wanted {
		t.Error("a healthy channel wants a probe")
	}
}

// A send that began before another one succeeded (one hung request while
// the service answers the rest) does not make the channel fail.
func TestHealthHungSendAmongSuccesses(t *testing.T) {
	h := newHealth(time.Second, time.Minute)
	hungSince := time.Now()
	time.Sleep(time.Millisecond)
	h.succeeded()
	if began, _ := h.failed(hungSince); began {
		t.Error("a send that hung while others went through made the channel fail")
	}
	if began, _ := h.failed(time.Now()); !began {
		t.Error("a failure after the last success did not make the channel fail")
	}
}

func TestQueuedDue(t *testing.T) {
	initial := time.Second
	now := time.Now()
	since := now.Add(-time.Minute)
	failing := healthState{failing: true, since: since, lastOK: since.Add(-time.Hour)}
	healthy := healthState{since: since, lastOK: now.Add(-time.Second)}
	deadline := now.Add(time.Hour)
	cases := []struct {
		name      string
		q         queued
		st        healthState
		wantFirst bool
		wantWait  bool
	}{
		{"news while failing: at once, a first attempt",
			queued{arrived: since.Add(time.Second), deadline: deadline}, failing, true, false},
		{"queued before the failure, never tried: waits for the probe",
			queued{arrived: since.Add(-time.Second), deadline: deadline}, failing, false, true},
		{"news that failed: waits for the probe",
			queued{arrived: since.Add(time.Second), deadline: deadline, failed: 1, lastFailure: now, retryAt: now.Add(initial)}, failing, false, true},
		{"chosen by the probe: at once",
			queued{arrived: since.Add(-time.Second), deadline: deadline, failed: 3, probe: true}, failing, false, false},
		{"retry_for is up: a last attempt, even while failing",
			queued{arrived: since.Add(-time.Second), deadline: now.Add(-time.Second), failed: 3}, failing, false, false},
		{"held for the direct sender: waits",
			queued{arrived: since.Add(time.Second), deadline: deadline, holdUntil: now.Add(time.Second), probe: true}, failing, false, true},
		{"backlog after the service answered: at once",
			queued{arrived: since.Add(-time.Second), deadline: deadline, failed: 2, lastFailure: now.Add(-2 * time.Second), retryAt: now.Add(time.Hour)}, healthy, false, false},
		{"failed after the last success (a hung send): its own backoff",
			queued{arrived: since.Add(-time.Second), deadline: deadline, failed: 1, lastFailure: now, retryAt: now.Add(initial)}, healthy, false, true},
	}
	for _, c := range cases {
		wait, first := c.q.due(now, c.st)
		if first != c.wantFirst || (wait > 0) != c.wantWait {
			t.Errorf("%s: wait %s, first attempt %v", c.name, wait, first)
		}
	}
}
