package rules

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// A pool that leaves zpool status and zpool list (exported, not imported
// at boot, its disks gone) takes the facts about it along. Without care
// every alert about it would then resolve: exporting a DEGRADED pool sent
// "[RESOLVED] pool vault is DEGRADED" 5.8 s later on real OpenZFS 2.3.2, a
// false all-clear. So the engine remembers the pools it has seen imported
// (KnownPools); while one of them is not imported its alerts are kept,
// firing and marked, instead of resolved, and PoolMissing says so. They end
// when the pool is back (evaluation resumes), or when the owner forgets it
// (zwatch forget-pool) or lists it in rules.pools.exported.

// Bounds on the pool memory of one host.
const (
	maxKnownPools = 32
	maxForgotten  = 32
	// knownPoolRefresh: how stale a known pool's "last seen" may get before
	// it is written again; every zpool list is not worth a state write.
	knownPoolRefresh = time.Hour
)

// keptMark is added to the summary of an alert kept for a missing pool.
const keptMark = " (pool not imported)"

// knownPool is a pool this host has had imported, or one its pool cache
// file lists to import at boot (LastSeen zero until it is seen imported).
type knownPool struct {
	// GUID is the pool's GUID in decimal, when zpool status -j or zpool
	// import gave it.
	GUID     string    `json:"guid,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

// noteCached records the pools of the cache file that did not import: they
// were meant to be, so once their disks vanish too (zpool import -c then
// lists nothing) they are still missing, not forgotten.
func (e *Engine) noteCached(h *hostState, cached []zfs.ImportablePool) {
	for _, p := range cached {
		if _, forgotten := h.Forgotten[p.Name]; forgotten || p.Name == "" || e.exportedOnPurpose(p.Name) || h.KnownPools[p.Name] != nil {
			continue
		}
		if h.KnownPools == nil {
			h.KnownPools = map[string]*knownPool{}
		}
		h.KnownPools[p.Name] = &knownPool{GUID: p.ID}
		h.dirty = true
	}
	for len(h.KnownPools) > maxKnownPools {
		delete(h.KnownPools, oldestPool(h.KnownPools))
	}
}

// exportedOnPurpose reports whether rules.pools.exported names the pool.
func (e *Engine) exportedOnPurpose(pool string) bool {
	for _, g := range poolsConfig.of(&e.cfg).Exported {
		if ok, _ := path.Match(g, pool); ok {
			return true
		}
	}
	return false
}

// staleAfterForget: a status or list judged this soon after a pool was
// forgotten (destroyed) may have been read before it was, since a zpool
// command can take up to zfs.command_timeout (30 s by default) and its
// fact is stamped when it ends; it does not bring the pool back. A pool
// made again under the same name within this time is seen by the next
// reading after it.
const staleAfterForget = time.Minute

// forgottenJustNow reports a pool forgotten less than staleAfterForget ago.
func (h *hostState) forgottenJustNow(name string, now time.Time) bool {
	at, ok := h.Forgotten[name]
	return ok && now.Sub(at) < staleAfterForget
}

// withoutForgotten is pools less those forgotten just now (a reading from
// before they were destroyed); pools itself when there are none.
func withoutForgotten[P any](h *hostState, now time.Time, pools []P, name func(P) string) []P {
	if !slices.ContainsFunc(pools, func(p P) bool { return h.forgottenJustNow(name(p), now) }) {
		return pools
	}
	out := make([]P, 0, len(pools))
	for _, p := range pools {
		if !h.forgottenJustNow(name(p), now) {
			out = append(out, p)
		}
	}
	return out
}

// notePools records the pools a status or list shows imported.
func (e *Engine) notePools(h *hostState, now time.Time, names []string, guids []string) {
	if h.KnownPools == nil {
		h.KnownPools = map[string]*knownPool{}
	}
	for i, name := range names {
		if name == "" || e.exportedOnPurpose(name) || h.forgottenJustNow(name, now) {
			continue
		}
		if _, ok := h.Forgotten[name]; ok {
			delete(h.Forgotten, name)
			h.dirty = true
		}
		k := h.KnownPools[name]
		if k == nil {
			k = &knownPool{}
			h.KnownPools[name] = k
			h.dirty = true
		}
		if guids != nil && guids[i] != "" && guids[i] != k.GUID {
			k.GUID = guids[i]
			h.dirty = true
		}
		// The same pool under its new name (zpool import OLD NEW) is not
		// missing under the old one.
		for other, o := range h.KnownPools {
			if other != name && k.GUID != "" && o.GUID == k.GUID {
				delete(h.KnownPools, other)
				h.dirty = true
			}
		}
		if now.Sub(k.LastSeen) >= knownPoolRefresh {
			k.LastSeen = now
			h.dirty = true
		}
	}
	for len(h.KnownPools) > maxKnownPools {
		delete(h.KnownPools, oldestPool(h.KnownPools))
	}
}

func oldestPool(m map[string]*knownPool) string {
	var name string
	for _, n := range sortedKeys(m) {
		if name == "" || m[n].LastSeen.Before(m[name].LastSeen) {
			name = n
		}
	}
	return name
}

// imported reports whether the pool is imported as far as the latest facts
// say: a pool listing (zpool status, zpool list) lists it, and no zpool
// import newer than that listing finds it waiting to be imported. With no
// listing yet, zpool import's own list of imported pools decides; with no
// fact at all it counts as imported (nothing says otherwise).
func (h *hostState) imported(pool string) bool {
	var listedAt time.Time
	listed, spoke := false, h.statusSeen || h.capacity != nil
	if h.statusSeen && statusLists(h, pool) {
		listed, listedAt = true, h.statusAt
	}
	if h.capacity != nil && capacityLists(h, pool) {
		listed = true
		if h.capacityAt.After(listedAt) {
			listedAt = h.capacityAt
		}
	}
	switch {
	case !spoke && h.imports != nil:
		return slices.Contains(h.imports.Imported, pool) && h.importEntry(pool) == nil
	case !spoke:
		return true
	case !listed:
		return false
	}
	return h.imports == nil || !h.importAt.After(listedAt) || h.importEntry(pool) == nil
}

func statusLists(h *hostState, pool string) bool {
	return slices.ContainsFunc(h.pools, func(p *zfs.Pool) bool { return p != nil && p.Name == pool })
}

func capacityLists(h *hostState, pool string) bool {
	return slices.ContainsFunc(h.capacity.pools, func(p zfs.PoolList) bool { return p.Name == pool })
}

// scopeLists reports whether the fact a scope was decided from still
// describes the pool. A condition left unreported by a fact that lists the
// pool has ended; one left unreported because the pool left the fact has
// not.
func (h *hostState) scopeLists(scope, pool string) bool {
	switch scope {
	case scopeStatus, scopeCorrelate:
		return statusLists(h, pool)
	case scopeCapacity:
		return h.capacity != nil && capacityLists(h, pool)
	case scopeDatasets:
		return datasetsList(h, pool)
	case scopeSnapshots:
		return datasetsList(h, pool) || snapshotsList(h, pool)
	case scopePools:
		return true // PoolMissing itself: reported while the pool is missing
	}
	return h.imported(pool)
}

// datasetsList: the datasets fact has a dataset of the pool.
func datasetsList(h *hostState, pool string) bool {
	return h.datasets != nil && slices.ContainsFunc(h.datasets.Datasets, func(d facts.DatasetState) bool { return poolOfDataset(d.Name) == pool })
}

// snapshotsList: the snapshots fact has snapshots of the pool.
func snapshotsList(h *hostState, pool string) bool {
	return h.snapshots != nil && slices.ContainsFunc(h.snapshots.Datasets, func(s zfs.SnapshotStats) bool { return poolOfDataset(s.Dataset) == pool })
}

// importEntry is what zpool import reported for the pool: the device scan
// first, else the cache file; nil when neither lists it. A pool of the same
// name with another GUID than the one seen imported (old disks of another
// pool) is not it.
func (h *hostState) importEntry(pool string) *zfs.ImportablePool {
	if h.imports == nil {
		return nil
	}
	guid := ""
	if k := h.KnownPools[pool]; k != nil {
		guid = k.GUID
	}
	for _, list := range [][]zfs.ImportablePool{h.imports.Found, h.imports.Cached} {
		for i := range list {
			if list[i].Name == pool && (guid == "" || list[i].ID == "" || list[i].ID == guid) {
				return &list[i]
			}
		}
	}
	return nil
}

// poolMissing reports whether zwatch has seen the pool imported, it is not
// now, and it is not exported on purpose.
func (e *Engine) poolMissing(h *hostState, pool string) bool {
	return e.keepsPool(h, pool) && !h.imported(pool)
}

// keepsPool: the pool's alerts are kept while it is gone, unless it was
// never seen imported, is exported on purpose or was forgotten.
func (e *Engine) keepsPool(h *hostState, pool string) bool {
	return pool != "" && h.KnownPools[pool] != nil && !e.exportedOnPurpose(pool)
}

// keep marks a firing alert whose condition went unreported because its
// pool is missing, and reports whether it was kept instead of resolved.
// SMART and kernel alerts are about disks, which their own facts still judge;
// pending ones were never news.
func (e *Engine) keep(h *hostState, t *tracked, scope string) bool {
	if t.A.State != alert.Firing || strings.HasPrefix(scope, scopeSmart) || scope == scopeKernel {
		return false
	}
	pool := t.A.Labels["pool"]
	if pool == "" {
		pool = t.Pool
	}
	if !e.keepsPool(h, pool) || h.scopeLists(scope, pool) {
		return false
	}
	markKept(h, t)
	return true
}

// markReported marks an alert still reported from facts that predate its
// pool's departure (zpool import finds the pool, a status from before the
// export): it is about a pool that is not imported now.
func (e *Engine) markReported(h *hostState, t *tracked, scope string) {
	if scope == scopePools || strings.HasPrefix(scope, scopeSmart) || scope == scopeKernel {
		return
	}
	pool := t.A.Labels["pool"]
	if pool == "" {
		pool = t.Pool
	}
	if e.poolMissing(h, pool) {
		markKept(h, t)
	}
}

func markKept(h *hostState, t *tracked) {
	if t.Kept {
		return
	}
	t.Kept = true
	t.A.Summary += keptMark
	ev := copyMap(t.A.Evidence)
	ev["pool_imported"] = "no"
	t.A.Evidence = ev
	h.dirty = true
}

// unkeep takes the mark off an alert that resolves or is reported again.
func unkeep(t *tracked) {
	if !t.Kept {
		return
	}
	t.Kept = false
	t.A.Summary = strings.TrimSuffix(t.A.Summary, keptMark)
	if _, ok := t.A.Evidence["pool_imported"]; ok {
		ev := copyMap(t.A.Evidence)
		delete(ev, "pool_imported")
		t.A.Evidence = ev
	}
}

// forgetPool drops a pool the owner says is gone for good: it is no longer
// known, a cache file entry for it no longer raises PoolMissing, and the
// alerts kept for it resolve now.
func (e *Engine) forgetPool(h *hostState, pool string, now time.Time) {
	delete(h.KnownPools, pool)
	if h.Forgotten == nil {
		h.Forgotten = map[string]time.Time{}
	}
	h.Forgotten[pool] = now
	for len(h.Forgotten) > maxForgotten {
		var oldest string
		for _, n := range sortedKeys(h.Forgotten) {
			if oldest == "" || h.Forgotten[n].Before(h.Forgotten[oldest]) {
				oldest = n
			}
		}
		delete(h.Forgotten, oldest)
	}
	h.dirty = true
	for fp, t := range h.Alerts {
		if t.Kept && (t.A.Labels["pool"] == pool || t.A.Labels["pool"] == "" && t.Pool == pool) {
			e.resolve(h, fp, t, now)
		}
	}
}
