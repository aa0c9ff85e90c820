package rules

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

const namePoolFillingFast = "PoolFillingFast"

// fillBaselines is what PoolFillingFast remembers of a host: each pool's
// first reading of the day.
type fillBaselines struct {
	Pools map[string]fillBaseline `json:"pools,omitempty"`
}

type fillBaseline struct {
	Pct float64   `json:"pct"`
	At  time.Time `json:"at"`
}

var fillMemory = remember[fillBaselines]("pool_filling_fast", 1, nil)

// poolFillingFastRule exists in this file only: it is what adding a rule
// with a memory takes. It pages when a pool filled by 20 points or more
// since its first zpool list of the day, which no single reading shows.
func poolFillingFastRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity},
		Eval: poolCapacityEval(func(c *evalCtx, p *zfs.PoolList) {
			mem := fillMemory.of(c.h)
			base, ok := mem.Pools[p.Name]
			if !ok || c.now.Sub(base.At) >= 24*time.Hour {
				if mem.Pools == nil {
					mem.Pools = map[string]fillBaseline{}
				}
				mem.Pools[p.Name] = fillBaseline{Pct: p.CapacityPct, At: c.now}
				c.h.dirty = true
				return
			}
			if p.CapacityPct-base.Pct < 20 {
				return
			}
			c.emit(cond{name: namePoolFillingFast, severity: alert.Warning, pool: p.Name,
				labels:   map[string]string{"pool": p.Name},
				summary:  fmt.Sprintf("pool %s filled from %.0f%% to %.0f%% since %s", p.Name, base.Pct, p.CapacityPct, base.At.UTC().Format("15:04")),
				desc:     "Something writes much more than usual: find it (zfs list -o space) before the pool is full.",
				evidence: map[string]string{"baseline_pct": fmt.Sprintf("%.0f", base.Pct)}})
		}),
		Alerts: []AlertInfo{{
			Name:      namePoolFillingFast,
			Severity:  "warning",
			Condition: "capacity 20 points above the day's first reading",
		}},
		Memory: []memoryDef{fillMemory},
	}
}

// A rule with a memory is its own declaration plus a catalogue that lists
// it: what it remembers is saved with the host's state, read back by the
// next engine (a restart, a partition moving), and the alert comes from
// it. An engine whose catalogue does not list it drops it on load.
func TestCatalogueSeamRuleWithMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, kv := openStateBucket(ctx, t)
	catalogue := append(Catalogue(), poolFillingFastRule())
	if err := checkCatalogue(catalogue); err != nil {
		t.Fatal(err)
	}
	tank := func(pct float64, at time.Time) bus.Envelope {
		return capEnv(t, []zfs.PoolList{{Name: "tank", CapacityPct: pct}}, nil, at)
	}

	before := NewEngineWith(config.DefaultRules(), catalogue, nil)
	observe(t, before, tank(12, t0), t0)
	if a := find(before, namePoolFillingFast); a != nil {
		t.Fatalf("the first reading raised %+v", a)
	}
	if err := before.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}

	// A restart: the next engine reads the state and judges from the
	// remembered baseline.
	after := NewEngineWith(config.DefaultRules(), catalogue, nil)
	if err := after.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(6 * time.Hour)
	observe(t, after, tank(40, at), at)
	a := find(after, namePoolFillingFast)
	if a == nil || a.State != alert.Firing || a.Summary != "pool tank filled from 12% to 40% since 12:00" || a.Evidence["baseline_pct"] != "12" {
		t.Fatalf("after the restart: %+v", a)
	}

	// Without the saved baseline the same reading is no news: the alert
	// came from the memory.
	forgetful := NewEngineWith(config.DefaultRules(), catalogue, nil)
	observe(t, forgetful, tank(40, at), at)
	if a := find(forgetful, namePoolFillingFast); a != nil {
		t.Fatalf("raised without the memory: %+v", a)
	}

	// The stock catalogue does not list the memory: its engine drops it.
	stock := newTestEngine()
	if err := stock.Load(ctx, kv); err != nil {
		t.Fatal(err)
	}
	h := stock.hosts[testHost]
	if h == nil {
		t.Fatal("the stock engine did not load the host")
	}
	if _, kept := h.Memory[fillMemory.memoryName()]; kept {
		t.Errorf("the stock engine kept a memory no rule of its catalogue lists: %s", mustJSON(t, h.Memory))
	}
	if !strings.Contains(string(mustJSON(t, after.hosts[testHost].Memory)), `"pool_filling_fast":{"v":1,"data":{"pools":{"tank":{"pct":12`) {
		t.Errorf("saved as %s", mustJSON(t, after.hosts[testHost].Memory))
	}
}
