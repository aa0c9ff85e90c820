package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

// factHandler is how the engine takes in one kind of fact, in the manner of
// ZED's one handler per event class.
type factHandler struct {
	// observe decodes the payload and evaluates the rules that read it;
	// facts.Unread for facts that only count as proof of life.
	observe facts.Handler[observation]
	// dedupe: the same payload bytes as last time carry no news
	// (collectors repeat themselves every poll).
	dedupe bool
	// correlate: the fact joins pools and disks, so the cross-source
	// rules run after it.
	correlate bool
	// reportsFailure: the fact says its collector failed, so it does not
	// count as that collector being fresh.
	reportsFailure bool
}

// observation is what a fact handler takes in a fact with. It travels by
// value: Observe allocates nothing for it.
type observation struct {
	e *Engine
	h *hostState
	// sum is the payload's hash when the kind is deduplicated.
	sum uint64
	now time.Time
}

// factHandlers lists every kind of fact the engine reads (facts.Kinds),
// by name; a kind missing here is refused by Observe.
func factHandlers() map[string]factHandler {
	out := map[string]factHandler{}
	for _, fh := range []factHandler{
		{observe: facts.HandlerOf(facts.ZpoolStatus, observeStatus), dedupe: true, correlate: true},
		{observe: facts.HandlerOf(facts.ZpoolCapacity, observeCapacity)},
		{observe: facts.HandlerOf(facts.Smart, observeSmart), dedupe: true, correlate: true},
		{observe: facts.HandlerOf(facts.ARC, observeARC)},
		{observe: facts.HandlerOf(facts.CollectorError, observeCollectorError), reportsFailure: true},
		{observe: facts.HandlerOf(facts.Heartbeat, observeHeartbeat)},
		// The kernel's pool states; the watcher scope (PoolSuspended) judges them.
		{observe: facts.HandlerOf(facts.PoolKstat, observeKstat)},
		// Events make the collectors poll status at once; the status rules
		// then judge. Delay and deadman events feed SlowIO and IOHung
		// (rule_slow_io.go). Maintenance windows are not in this engine yet.
		{observe: facts.HandlerOf(facts.ZpoolEvent, observeEvent)},
		{observe: facts.Unread[observation](facts.Maintenance)},
		{observe: facts.HandlerOf(facts.PoolImport, observeImport)},
		{observe: facts.HandlerOf(facts.PoolForget, observeForget)},
		{observe: facts.HandlerOf(facts.IncidentAction, observeAction)},
		{observe: facts.HandlerOf(facts.Datasets, observeDatasets), dedupe: true},
		// Not deduplicated: a listing that stays the same is the news of
		// snapshots that stopped, and its time keeps it trusted.
		{observe: facts.HandlerOf(facts.Snapshots, observeSnapshots)},
		{observe: facts.HandlerOf(facts.KernelLog, observeKernelLog), correlate: true},
		{observe: facts.HandlerOf(facts.Disks, observeDisks), dedupe: true},
		{observe: facts.HandlerOf(facts.DiskForget, observeDiskForget)},
		{observe: facts.HandlerOf(facts.ZFSVersion, observeZFSVersion)},
	} {
		out[fh.observe.Kind().Name()] = fh
	}
	return out
}

func observeStatus(o observation, env bus.Envelope, d *facts.StatusData) error {
	e, h, now, sum := o.e, o.h, o.now, o.sum
	pools := withoutForgotten(h, now, d.Pools, func(p *zfs.Pool) string {
		if p == nil {
			return ""
		}
		return p.Name
	})
	h.pools, h.statusSeen, h.statusAt = pools, true, env.CollectedAt
	names, guids := make([]string, 0, len(pools)), make([]string, 0, len(pools))
	for _, p := range pools {
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

func observeCapacity(o observation, env bus.Envelope, d *facts.CapacityData) error {
	e, h, now := o.e, o.h, o.now
	pools := withoutForgotten(h, now, d.Pools, func(p zfs.PoolList) string { return p.Name })
	h.capacity = &capacityFacts{pools: pools, datasets: d.Datasets}
	h.capacityAt = env.CollectedAt
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		names = append(names, p.Name)
	}
	e.notePools(h, now, names, nil)
	e.evalCapacity(h, now)
	e.evalPools(h, now)
	return nil
}

func observeDatasets(o observation, env bus.Envelope, d *facts.DatasetsData) error {
	e, h, now, sum := o.e, o.h, o.now, o.sum
	h.datasets = d
	h.remember("datasets", sum)
	// The dataset rules run after this (eachDataset, a declared scope).
	if h.snapshots != nil {
		e.evalSnapshots(h, now)
	}
	return nil
}

func observeSnapshots(o observation, env bus.Envelope, d *facts.SnapshotsData) error {
	o.h.snapshots, o.h.snapshotsAt = d, env.CollectedAt
	o.e.evalSnapshots(o.h, o.now)
	return nil
}

// poolDestroyed says whether a pool_destroy event is about the pool zwatch
// knows by that name: not one of the same name whose GUID differs (the
// event of an older pool, read late).
func poolDestroyed(h *hostState, ev *zfs.Event) bool {
	if ev.Pool == "" {
		return false
	}
	k := h.KnownPools[ev.Pool]
	return k == nil || k.GUID == "" || ev.PoolGUID == "" || k.GUID == ev.PoolGUID
}

func observeImport(o observation, env bus.Envelope, d *facts.PoolImportData) error {
	e, h, now := o.e, o.h, o.now
	h.imports, h.importAt = d, env.CollectedAt
	e.noteCached(h, d.Cached)
	e.evalPools(h, now)
	return nil
}

// observeForget: the owner says a pool is gone for good (zwatch forget-pool).
func observeForget(o observation, env bus.Envelope, d *facts.PoolForgetData) error {
	e, h, now := o.e, o.h, o.now
	if d.Pool == "" {
		return fmt.Errorf("decode %s from %s: no pool named", env.Schema, env.Host)
	}
	e.log.Info("pool forgotten", "host", env.Host, "pool", d.Pool, "by", d.By)
	e.forgetPool(h, d.Pool, now)
	e.evalPools(h, now)
	return nil
}

func observeSmart(o observation, _ bus.Envelope, r *smart.Report) error {
	o.h.remember("smart/"+r.Serial+"/"+r.Device, o.sum)
	o.e.evalSmart(o.h, r, o.now)
	return nil
}

func observeARC(o observation, _ bus.Envelope, a *zfs.ARC) error {
	o.e.evalARC(o.h, a, o.now)
	return nil
}

func observeCollectorError(o observation, env bus.Envelope, ce *facts.CollectorErrorData) error {
	o.e.noteCollectorError(o.h, env, *ce)
	return nil
}

func observeHeartbeat(o observation, env bus.Envelope, hb *facts.HeartbeatData) error {
	o.e.noteHeartbeat(o.h, env, *hb)
	return nil
}

// observeEvent takes the zpool events SlowIO and IOHung read; the others
// are proof of life.
func observeEvent(o observation, env bus.Envelope, d *facts.EventData) error {
	e, h, now := o.e, o.h, o.now
	if e.cause != nil && !d.Time.IsZero() {
		e.cause.Event = d.Time // ZFS's own time of the event: the first leg
	}
	if d.Fields["ena"] != "" && h.slowIO().Clock.learn(&d.Event) {
		h.dirty = true
	}
	if state, ok := stateEvent(&d.Event); ok && h.pools != nil {
		// Judge the event against the last known tree now (event_tree.go).
		if pools, changed := applyStateEvent(h.pools, &d.Event, state); changed {
			h.pools = pools
			// The next status is news even if it says what the last one did.
			h.forget("status")
			e.evalStatus(h, now)
			e.evalPools(h, now)
			e.evalCorrelate(h, now)
		}
		return nil
	}
	switch d.Class {
	case "sysevent.fs.zfs.pool_destroy":
		if poolDestroyed(h, &d.Event) {
			// zpool destroy is the owner's own act: the pool is not missing.
			e.log.Info("pool destroyed", "host", env.Host, "pool", d.Pool, "guid", d.PoolGUID)
			e.forgetPool(h, d.Pool, now)
			e.evalPools(h, now)
		}
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
