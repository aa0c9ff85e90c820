package pipeline

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/zwatch/zwatch/model/alert"
)

// An escalation page published by an engine that stopped or crashed before
// its state was saved is made again by the engine that loads the saved
// state (the next owner of the host's partition, or the same server after
// a restart), at its own clock. It must carry the same ID, so that the
// outbox's duplicate window drops it, as it drops a repeated page (whose ID
// comes from the saved group's flush time): escalation's ID is made from
// the saved state, not from when the engine happened to tick. A later step
// is a new page with a new ID.
func TestEscalationIDIsTheSameWhenMadeAgain(t *testing.T) {
	p := New(Config{RepeatCritical: 4 * time.Hour, GroupBy: []string{"pool"}, Escalate: []time.Duration{30 * time.Minute, 2 * time.Hour}})
	b := NewBook()
	conds := []Cond{testCond("RedundancyMargin", alert.Critical), testCond("VdevState", alert.Critical)}
	p.Dedup(&b, "status", len(conds), func(i int) Cond { return conds[i] }, Hooks{}, t0)
	p.Settle(&b, t0)
	if ns, _ := p.Flush(&b, "nas1", nil, t0); len(ns) != 1 {
		t.Fatalf("critical page: %+v", ns)
	}
	saved, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *Book {
		var l Book
		if err := json.Unmarshal(saved, &l); err != nil {
			t.Fatal(err)
		}
		l.FixMaps()
		return &l
	}
	first, _ := p.Escalate(load(), "nas1", t0.Add(30*time.Minute+200*time.Millisecond))
	again, _ := p.Escalate(load(), "nas1", t0.Add(31*time.Minute+3*time.Second))
	if len(first) != 1 || len(again) != 1 || first[0].Escalation != 1 || again[0].Escalation != 1 {
		t.Fatalf("step 1: %+v, made again: %+v", first, again)
	}
	if first[0].ID != again[0].ID {
		t.Errorf("step 1 made again from the same saved state has another ID: %s, then %s", first[0].ID, again[0].ID)
	}
	b2 := load()
	p.Escalate(b2, "nas1", t0.Add(30*time.Minute))
	step2, _ := p.Escalate(b2, "nas1", t0.Add(2*time.Hour))
	if len(step2) != 1 || step2[0].Escalation != 2 || step2[0].ID == first[0].ID {
		t.Errorf("step 2: %+v (step 1 %s)", step2, first[0].ID)
	}
}
