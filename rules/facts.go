package rules

import (
	"fmt"
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
		// then judge. Delay and deadman events feed SlowIO and IOHung
		// (rule_slow_io.go). Maintenance windows are not in this engine yet.
		facts.KindZpoolEvent:  {observe: observeEvent},
		facts.KindMaintenance: {},
		facts.KindPoolImport:  {observe: observeImport},
		facts.KindPoolForget:  {observe: observeForget},
		facts.KindDatasets:    {dedupe: true, observe: observeDatasets},
		// Not deduplicated: a listing that stays the same is the news of
		// snapshots that stopped, and its time keeps it trusted.
		facts.KindSnapshots:  {observe: observeSnapshots},
		facts.KindKernelLog:  {correlate: true, observe: observeKernelLog},
		facts.KindDisks:      {dedupe: true, observe: observeDisks},
		facts.KindDiskForget: {observe: observeDiskForget},
		facts.KindZFSVersion: {observe: observeZFSVersion},
	}
}

func observeStatus(e *Engine, h *hostState, env bus.Envelope, sum uint64, now time.Time) error {
	var d facts.StatusData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.pools, h.statusSeen, h.statusAt = d.Pools, true, env.CollectedAt
	names, guids := make([]string, 0, len(d.Pools)), make([]string, 0, len(d.Pools))
	for _, p := range d.Pools {
		if p != nil {
			names, guids = append(names, p.Name), append(guids, p.GUID)
		}
	}
	e.notePools(h, now, names, guids)
	h.remember("status", sum)
	e.evalStatus(h, now)
	e.evalPools(h, now)
	return nil
}

func observeCapacity(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.CapacityData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.capacity = &capacityFacts{pools: d.Pools, datasets: d.Datasets}
	h.capacityAt = env.CollectedAt
	names := make([]string, 0, len(d.Pools))
	for _, p := range d.Pools {
		names = append(names, p.Name)
	}
	e.notePools(h, now, names, nil)
	e.evalCapacity(h, now)
	e.evalPools(h, now)
	return nil
}

func observeDatasets(e *Engine, h *hostState, env bus.Envelope, sum uint64, now time.Time) error {
	var d facts.DatasetsData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.datasets = &d
	h.remember("datasets", sum)
	e.evalDatasets(h, now)
	if h.snapshots != nil {
		e.evalSnapshots(h, now)
	}
	return nil
}

func observeSnapshots(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.SnapshotsData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.snapshots, h.snapshotsAt = &d, env.CollectedAt
	e.evalSnapshots(h, now)
	return nil
}

func observeImport(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.PoolImportData
	if err := decode(env, &d); err != nil {
		return err
	}
	h.imports, h.importAt = &d, env.CollectedAt
	e.noteCached(h, d.Cached)
	e.evalPools(h, now)
	return nil
}

// observeForget: the owner says a pool is gone for good (zwatch forget-pool).
func observeForget(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.PoolForgetData
	if err := decode(env, &d); err != nil {
		return err
	}
	if d.Pool == "" {
		return fmt.Errorf("decode %s from %s: no pool named", env.Schema, env.Host)
	}
	e.log.Info("pool forgotten", "host", env.Host, "pool", d.Pool, "by", d.By)
	e.forgetPool(h, d.Pool, now)
	e.evalPools(h, now)
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

// observeEvent takes the zpool events SlowIO and IOHung read; the others
// are proof of life.
func observeEvent(e *Engine, h *hostState, env bus.Envelope, _ uint64, now time.Time) error {
	var d facts.EventData
	if err := decode(env, &d); err != nil {
		return err
	}
	if d.Fields["ena"] != "" && h.slowIO().Clock.learn(&d.Event) {
		h.dirty = true
	}
	switch d.Class {
	case "ereport.fs.zfs.deadman":
		noteDeadman(h, &d.Event, slowIOConfig.of(&e.cfg).Clear.D(), now)
		e.evalPools(h, now)
	case "ereport.fs.zfs.delay":
		if noteDelay(h, &d.Event, now) && h.pools != nil {
			e.evalStatus(h, now)
		}
	}
	return nil
}
