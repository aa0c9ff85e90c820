package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// poolSettings are rules.pools: pools that are not imported.
type poolSettings struct {
	// Exported lists pool globs that are exported on purpose (a backup
	// pool rotated off-site): their absence is not PoolMissing.
	Exported []string `yaml:"exported" note:"Pools exported on purpose (globs), such as a backup pool rotated off-site."`
}

var poolsConfig = defineConfig("pools", poolSettings{})

func (s poolSettings) validate(p string, errs *config.Errors) {
	globs(errs, p+".exported", s.Exported, "a pool glob such as offsite*")
}

func poolMissingRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolStatus, facts.ZpoolCapacity, facts.PoolImport, facts.PoolForget},
		Eval:  poolsEval(rulePoolMissing),
		Config: []config.RuleSection{
			poolsConfig,
		},
		Alerts: []AlertInfo{{
			Name: namePoolMissing,
			// An export and import by hand takes seconds.
			For:      2 * time.Minute,
			Severity: "critical; warning when `zpool import` finds it ONLINE (importable, every device present)",
			Condition: "a pool zwatch has seen imported (kept in its state), or one the cache file lists, is not imported (not in `zpool status`/`zpool list`); " +
				"not for `pools.exported`. Its other alerts stay firing, marked \"pool not imported\", until it is back or `zwatch forget-pool`; `for` {for}",
		}},
	}
}

// namePoolMissing: a pool that vanished from zpool list — not imported at
// boot, exported and forgotten, its disks gone. A monitor that only judges
// the pools it sees says nothing, so the engine remembers the pools it has
// seen (pools.go) and the cache file's list of pools to import at boot.
func rulePoolMissing(c *evalCtx) {
	h := c.h
	if !h.statusSeen && h.capacity == nil && h.imports == nil {
		return // nothing has said which pools are imported yet
	}
	// The cache file's pools that did not import are known too (noteCached).
	for _, name := range sortedKeys(h.KnownPools) {
		if c.e.exportedOnPurpose(name) || h.imported(name) {
			continue
		}
		emitPoolMissing(c, name)
	}
}

func emitPoolMissing(c *evalCtx, name string) {
	h := c.h
	entry := h.importEntry(name)
	pool := shellWord(name)
	sev := alert.Critical
	ev := map[string]string{"imported": "no"}
	var b strings.Builder
	if k := h.KnownPools[name]; k != nil && !k.LastSeen.IsZero() {
		fmt.Fprintf(&b, "Pool %s, imported here last on %s, is not imported now.", name, k.LastSeen.UTC().Format("2006-01-02 15:04 MST"))
		ev["last_seen"] = k.LastSeen.UTC().Format(time.RFC3339)
	} else {
		file := "the pool cache file"
		if h.imports != nil && h.imports.CacheFile != "" {
			file += " " + h.imports.CacheFile
		}
		fmt.Fprintf(&b, "Pool %s is in %s, so it was meant to be imported at boot, and it is not imported.", name, file)
	}
	switch {
	case h.imports == nil:
		b.WriteString(" zwatch has not run `zpool import` yet to look for its disks; run it to see what it finds.")
		ev["zpool_import"] = "not run yet"
	case entry == nil:
		fmt.Fprintf(&b, " `zpool import` does not find its disks: attach them (check cables, power and `ls -l /dev/disk/by-id`), then `zpool import -d /dev/disk/by-id %s`.", pool)
		ev["zpool_import"] = "not found"
		if h.imports.CacheError != "" {
			fmt.Fprintf(&b, " (The cache file could not be listed: %s.)", h.imports.CacheError)
			ev["cache_error"] = h.imports.CacheError
		}
	default:
		target := pool
		if samePoolName(h.imports, name) > 1 && entry.ID != "" {
			target = entry.ID // two pools of that name: import by id
		}
		fmt.Fprintf(&b, " `zpool import` finds it%s: state %s", importIDText(entry), entry.State)
		if len(entry.Missing) > 0 {
			fmt.Fprintf(&b, ", %d of %d devices not ONLINE (%s)", len(entry.Missing), entry.Devices, strings.Join(entry.Missing, ", "))
			ev["devices_not_online"] = strings.Join(entry.Missing, ", ")
		}
		b.WriteString(".")
		if s := oneLine(entry.Status); s != "" {
			b.WriteString("\nstatus: " + s)
		}
		if s := oneLine(entry.Action); s != "" {
			b.WriteString("\naction: " + s)
		}
		fmt.Fprintf(&b, "\nImport it by its by-id device names: `zpool import -d /dev/disk/by-id %s`.", target)
		ev["zpool_import"], ev["import_state"] = "found", entry.State
		if entry.State == zfs.StateOnline && len(entry.Missing) == 0 {
			sev = alert.Warning
		}
	}
	fmt.Fprintf(&b, "\nIts alerts stay until it is back. If it is gone for good: `zwatch forget-pool %s`; if it is exported on purpose (a backup pool kept off-site), add it to rules.pools.exported.", pool)
	c.emit(cond{name: namePoolMissing, severity: sev, pool: name,
		labels:   map[string]string{"pool": name},
		summary:  poolMissingSummary(name, h, entry),
		desc:     b.String(),
		evidence: ev})
}

func poolMissingSummary(name string, h *hostState, entry *zfs.ImportablePool) string {
	switch {
	case h.imports == nil:
		return fmt.Sprintf("pool %s is not imported", name)
	case entry == nil:
		return fmt.Sprintf("pool %s is not imported and its disks are not found", name)
	case len(entry.Missing) > 0:
		return fmt.Sprintf("pool %s is not imported: zpool import finds it %s, %d device(s) not ONLINE", name, entry.State, len(entry.Missing))
	}
	return fmt.Sprintf("pool %s is not imported: zpool import finds it %s", name, entry.State)
}

func importIDText(p *zfs.ImportablePool) string {
	if p.ID == "" {
		return ""
	}
	return " (id " + p.ID + ")"
}

// samePoolName counts the pools of that name zpool import lists.
func samePoolName(d *facts.PoolImportData, name string) int {
	ids := map[string]bool{}
	for _, list := range [][]zfs.ImportablePool{d.Found, d.Cached} {
		for _, p := range list {
			if p.Name == name {
				ids[p.ID] = true
			}
		}
	}
	return len(ids)
}
