package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/alert"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
)

const namePoolReadOnly = "PoolReadOnly"

// poolReadOnlyRule exists in this file only: it is what adding a rule
// takes. It reads the capacity facts zpool list already sends, and a dead
// pool carries it like the other alerts about the pool.
func poolReadOnlyRule() Rule {
	return Rule{
		Reads: []string{facts.KindZpoolCapacity},
		Eval: poolCapacityEval(func(c *evalCtx, p *zfs.PoolList) {
			if !p.ReadOnly {
				return
			}
			c.emit(cond{name: namePoolReadOnly, severity: alert.Warning, pool: p.Name,
				labels:  map[string]string{"pool": p.Name},
				summary: fmt.Sprintf("pool %s is imported read-only", p.Name),
				desc:    "Writes to it fail. Export it and import it again without -o readonly=on once it is safe."})
		}),
		Alerts: []AlertInfo{{
			Name:        namePoolReadOnly,
			Severity:    "warning",
			Condition:   "pool imported read-only",
			InhibitedBy: []InhibitRule{poolDown()},
		}},
	}
}

// A new rule is its own declaration plus a catalogue that lists it: config
// accepts its name, the engine runs it in its scope and applies its
// inhibition, and nothing else changes.
func TestCatalogueSeam(t *testing.T) {
	catalogue := append(Catalogue(), poolReadOnlyRule())
	if err := checkCatalogue(catalogue); err != nil {
		t.Fatal(err)
	}

	file := "rules: {for: {PoolReadOnly: 1m}}"
	if _, err := config.Parse(strings.NewReader(file), configCatalog(Catalogue())); err == nil || !strings.Contains(err.Error(), "rules.for.PoolReadOnly") {
		t.Errorf("the stock catalogue accepted an alert it does not have: %v", err)
	}
	loaded, err := config.Parse(strings.NewReader(file), configCatalog(catalogue))
	if err != nil {
		t.Fatal(err)
	}

	e := NewEngineWith(loaded.Config.Rules, catalogue, nil)
	readOnly := capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: 12, ReadOnly: true}}, nil, t0)
	observe(t, e, readOnly, t0)
	a := find(e, namePoolReadOnly)
	if a == nil || a.State != alert.Pending || a.Summary != "pool tank is imported read-only" {
		t.Fatalf("PoolReadOnly is not pending its 1m `for` from the config: %+v", a)
	}
	e.Tick(t0.Add(time.Minute))
	if a := find(e, namePoolReadOnly); a == nil || a.State != alert.Firing {
		t.Fatalf("PoolReadOnly did not fire after its `for`: %+v", a)
	}

	// A FAULTED pool tank carries it, through the inhibition it declared.
	observe(t, e, poolsEnv(t, []*zfs.Pool{{Name: "tank", State: zfs.StateFaulted}}, t0.Add(time.Minute)), t0.Add(time.Minute))
	tr := e.hosts[testHost].Alerts[find(e, namePoolReadOnly).Fingerprint]
	if !tr.Inhibited {
		t.Error("PoolState FAULTED does not inhibit PoolReadOnly of the same pool")
	}

	stock := newTestEngine()
	observe(t, stock, readOnly, t0)
	if find(stock, namePoolReadOnly) != nil {
		t.Error("the stock engine raised an alert its catalogue does not have")
	}
}
