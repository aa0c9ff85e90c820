package rules

import (
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/smart"
	"github.com/zwatch/zwatch/zfs"
)

// factHandler is how the engine takes in one kind of fact, in the manner of
// ZED's one handler per event class.
type factHandler struct {
	// dedupe: the same payload bytes as last time carry no news
	// (collectors repeat themselves every poll).
	dedupe bool
	// correlate: the fact joins pools and disks, so the cross-source
	// rules run after it.
	correlate bool
	// reportsFailure: the fact says its collector failed, so it does not
	// count as that collector being fresh.
	reportsFailure bool
	// observe decodes the payload and evaluates the rules that read it; nil
	// for facts that only count as proof of life. sum is the payload's hash
	// when dedupe is set.
	observe func(e *Engine, h *hostState, env bus.Envelope, sum uint64, now time.Time) error
}

// factHandlers lists every kind of fact the engine reads (facts.Kinds); a
// kind missing here is refused by Observe.
func factHandlers() map[string]factHandler {
	return map[string]factHandler{
		facts.KindZpoolStatus:    {dedupe: true, correlate: true, observe: observeStatus},
		facts.KindZpoolCapacity:  {observe: observeCapacity},
		facts.KindSmart:          {dedupe: true, correlate: true, observe: observeSmart},
		facts.KindARC:            {observe: observeARC},
		facts.KindCollectorError: {reportsFailure: true, observe: observeCollectorError},
		facts.KindHeartbeat:      {observe: observeHeartbeat},
		// The kernel's pool states; the watcher scope (PoolSuspended) judges them.
		facts.KindPoolKstat: {observe: observeKstat},
		// Events make the collectors poll status at once; the status rules
		// then judge. Maintenance windows are not in this engine yet.
		facts.KindZpoolEvent:  {},
		facts.KindMaintenance: {},
		facts.KindPoolImport:  {},
		facts.KindPoolForget:  {},
		facts.KindDatasets:    {},
		facts.KindSnapshots:   {},
	}
}

func observeStatus(e *Engine, h *hostState, env bus.Envelope, sum uint64, now time.Time) error {
	var d facts.StatusData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.pools = d.Pools
	h.remember("status", sum)
	e.evalStatus(h, now)
	return nil
}

func observeCapacity(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.CapacityData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.capacity = &capacityFacts{pools: d.Pools, datasets: d.Datasets}
	e.evalCapacity(h, now)
	return nil
}

func observeSmart(e *Engine, h *hostState, env bus.Envelope, sum uint64, now time.Time) error {
	var r smart.Report
	if err := decode(env, &r); err != nil {
		return err
	}
	h.remember("smart/"+r.Serial+"/"+r.Device, sum)
	e.evalSmart(h, &r, now)
	return nil
}

func observeARC(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var a zfs.ARC
	if err := decode(env, &a); err != nil {
		return err
	}
	e.evalARC(h, &a, now)
	return nil
}

func observeCollectorError(e *Engine, h *hostState, env bus.Envelope, _ uint64, _ time.Time) error {
	var ce facts.CollectorError
	if err := decode(env, &ce); err != nil {
		return err
	}
	e.noteCollectorError(h, env, ce)
	return nil
}

func observeHeartbeat(e *Engine, h *hostState, env bus.Envelope, _ uint64, _ time.Time) error {
	var hb facts.Heartbeat
	if err := decode(env, &hb); err != nil {
		return err
	}
	e.noteHeartbeat(h, env, hb)
	return nil
}
