package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// snapshotSettings are rules.snapshots: snapshots that stopped, and
// snapshots that eat the pool.
type snapshotSettings struct {
	// MaxAge sets the newest snapshot's allowed age per dataset glob; a
	// dataset no entry matches is judged by its snapshot tool's period
	// (period × 2 + Grace), recognised from the names.
	MaxAge []datasetAge `yaml:"max_age" doc:"e.g. [{dataset: tank/photos, max_age: 2d}]" note:"Newest snapshot age per dataset glob (first match wins; 0 = unchecked).\nDatasets not listed are judged by their snapshot tool's period, read\nfrom the names (sanoid, zfs-auto-snapshot, TrueNAS, zrepl, pyznap):\nstale past period × 2 + grace."`
	// Grace is added to twice the recognised period.
	Grace config.Duration `yaml:"grace"`
	// SpaceShare: snapshots holding more than this percentage of a pool's
	// used space warn, once the pool is past capacity.warning.
	SpaceShare float64 `yaml:"space_share" doc:"snapshots holding more than this % of a full pool's used space → warning"`
	// MaxCount: more snapshots than this on one dataset slow every zfs command.
	MaxCount int `yaml:"max_count" doc:"more snapshots than this on one dataset → warning"`
}

var snapshotsConfig = defineConfig("snapshots", snapshotSettings{Grace: config.Duration(time.Hour), SpaceShare: 50, MaxCount: 10000})

func (s snapshotSettings) validate(p string, errs *config.Errors) {
	datasetAges(errs, p+".max_age", s.MaxAge)
	if g := s.Grace.D(); g < 0 || g > 7*24*time.Hour {
		errs.Add(p+".grace", config.FormatDuration(g), "must be between 0s and 7d")
	}
	percent(errs, p+".space_share", s.SpaceShare)
	if s.MaxCount < 1 {
		errs.Add(p+".max_count", s.MaxCount, "must be at least 1 (snapshots per dataset)")
	}
}

func snapshotStaleRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Snapshots},
		Eval:  snapshotEval(ruleSnapshotStale),
		Config: []config.RuleSection{
			snapshotsConfig, replicationConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSnapshotStale,
			Thresholds: snapshotsConfig.thresholds("grace"),
			Severity:   "warning",
			Condition: "newest snapshot older than the first `snapshots.max_age` entry matching the dataset (0 = unchecked), else than its snapshot tool's period × 2 + `snapshots.grace` ({snapshots.grace}), " +
				"the period recognised from the names (sanoid, zfs-auto-snapshot, TrueNAS, zrepl, pyznap; the shortest one used); datasets with neither, and backup targets (`replication.targets`) without an entry, are not checked; re-judged every 15 s",
		}},
	}
}

func snapshotCountRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Snapshots},
		Eval:  snapshotEval(ruleSnapshotCount),
		Config: []config.RuleSection{
			snapshotsConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSnapshotCount,
			For:        time.Hour,
			Thresholds: snapshotsConfig.thresholds("max_count"),
			Severity:   "warning",
			Condition:  "more than `snapshots.max_count` ({snapshots.max_count}) snapshots on one dataset; `for` {for}",
		}},
	}
}

func snapshotSpaceRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZpoolCapacity, facts.Datasets},
		Eval:  poolCapacityEval(ruleSnapshotSpace),
		Config: []config.RuleSection{
			snapshotsConfig, capacityConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameSnapshotSpace,
			For:        30 * time.Minute,
			Thresholds: []Threshold{snapshotsConfig.threshold("space_share"), capacityConfig.threshold("warning")},
			Severity:   "warning",
			Condition:  "snapshots (usedbysnapshots of the pool's datasets) hold more than `snapshots.space_share` ({snapshots.space_share} %) of the pool's used space while the pool is past `capacity.warning` ({capacity.warning}); names the biggest holders; `for` {for}",
		}},
	}
}

// nameSnapshotStale: the snapshot timer died. Owners find out the day they
// need a rollback; sanoid users ask for exactly this (--monitor-snapshots).
// The period comes from config, else from the tool's naming (docs/
// snapshot-names.md), judged on that tool's newest snapshot so that a
// manual snapshot does not hide a dead timer.
func ruleSnapshotStale(c *evalCtx, s *zfs.SnapshotStats) {
	if s.Count == 0 {
		return
	}
	cfg := snapshotsConfig.of(c.cfg)
	maxAge, configured := firstAge(cfg.MaxAge, s.Dataset)
	newest, newestName := s.Newest, s.NewestName
	var expect, hint string
	switch {
	case configured && maxAge == 0:
		return
	case configured:
		expect = fmt.Sprintf("rules.snapshots.max_age allows %s", units.Age(maxAge))
		hint = "check the job that takes them"
		if s.Scheme != nil {
			hint = snapshotToolHint(s.Scheme.Tool, s.Dataset)
		}
	default:
		if s.Scheme == nil || s.Scheme.Period <= 0 {
			return
		}
		if _, target := firstAge(replicationConfig.of(c.cfg).Targets, s.Dataset); target {
			return // received snapshots: ReplicationStale judges them
		}
		sc := s.Scheme
		grace := cfg.Grace.D()
		maxAge = 2*sc.Period + grace
		newest, newestName = sc.Newest, sc.NewestName
		expect = fmt.Sprintf("%s takes %s snapshots every %s, so zwatch allows %s (twice that plus %s grace)",
			sc.Tool, schemeLabel(sc), units.Age(sc.Period), units.Age(maxAge), units.Age(grace))
		hint = snapshotToolHint(sc.Tool, s.Dataset)
	}
	age := c.now.Sub(newest)
	if newest.IsZero() || age <= maxAge {
		return
	}
	pool := poolOfDataset(s.Dataset)
	c.emit(cond{name: nameSnapshotStale, severity: alert.Warning, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": s.Dataset},
		summary: fmt.Sprintf("snapshots of %s stopped: newest is %s old", s.Dataset, units.Age(age)),
		desc: fmt.Sprintf("The newest snapshot of %s, %s@%s, was taken %s (%s ago); %s. Snapshots are not being taken: %s.",
			s.Dataset, s.Dataset, newestName, newest.UTC().Format(time.RFC3339), units.Age(age), expect, hint),
		evidence: listingEvidence(c, map[string]string{"newest": newest.UTC().Format(time.RFC3339), "newest_name": newestName,
			"max_age": units.Age(maxAge), "count": fmt.Sprint(s.Count)})})
}

func schemeLabel(sc *zfs.SnapshotScheme) string {
	if sc.Label != "" {
		return sc.Label
	}
	return "its"
}

// snapshotToolHint is where to look when a tool stopped taking snapshots.
func snapshotToolHint(tool, dataset string) string {
	switch tool {
	case "sanoid":
		return "check sanoid's timer, `systemctl status sanoid.timer` and `journalctl -u sanoid.service`, and that sanoid.conf still lists " + dataset
	case "zfs-auto-snapshot":
		return "zfs-auto-snapshot runs from cron (/etc/cron.d/zfs-auto-snapshot and /etc/cron.{hourly,daily,weekly,monthly}): check that cron runs, and `zfs get com.sun:auto-snapshot " + shellWord(dataset) + "` (false turns it off)"
	case "truenas":
		return "check its Periodic Snapshot Task in the TrueNAS web interface (Data Protection)"
	case "zrepl":
		return "check `zrepl status` and `journalctl -u zrepl`"
	case "pyznap":
		return "pyznap runs from cron (`pyznap snap`): check that entry and pyznap's log"
	}
	return "check the job that takes them"
}

// nameSnapshotCount: tens of thousands of snapshots slow every zfs list,
// send and boot-time mount; a pruning job that died lets them pile up.
func ruleSnapshotCount(c *evalCtx, s *zfs.SnapshotStats) {
	limit := snapshotsConfig.of(c.cfg).MaxCount
	if limit <= 0 || s.Count <= limit {
		return
	}
	pool := poolOfDataset(s.Dataset)
	name := shellWord(s.Dataset)
	c.emit(cond{name: nameSnapshotCount, severity: alert.Warning, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": s.Dataset},
		summary: fmt.Sprintf("%s has %d snapshots", s.Dataset, s.Count),
		desc: fmt.Sprintf("%s has %d snapshots (more than rules.snapshots.max_count, %d); they hold %s. So many slow every zfs command, send and mount: check that the snapshot tool still prunes (its retention settings). The oldest: `zfs list -H -t snapshot -o name -s creation -d 1 %s | head`; delete a range after a dry run: `zfs destroy -nv %s@OLDEST%%NEWER`, then without -n.",
			s.Dataset, s.Count, limit, units.IEC(s.UsedBytes), name, name),
		evidence: map[string]string{"count": fmt.Sprint(s.Count), "used_bytes": itoa(s.UsedBytes)}})
}

// nameSnapshotSpace: a pool filling up because snapshots keep deleted
// data. Only said when the pool is past its capacity warning: snapshots
// holding space on an empty pool are what they are for.
func ruleSnapshotSpace(c *evalCtx, p *zfs.PoolList) {
	cfg := snapshotsConfig.of(c.cfg)
	if c.h.datasets == nil || cfg.SpaceShare <= 0 || p.CapacityPct < capacityConfig.of(c.cfg).Warning {
		return
	}
	var root *facts.DatasetState
	var held uint64
	var holders []*facts.DatasetState
	for i := range c.h.datasets.Datasets {
		d := &c.h.datasets.Datasets[i]
		if poolOfDataset(d.Name) != p.Name {
			continue
		}
		if d.Name == p.Name {
			root = d
		}
		if d.UsedBySnapshotsBytes > 0 {
			held += d.UsedBySnapshotsBytes
			holders = append(holders, d)
		}
	}
	if root == nil || root.UsedBytes == 0 {
		return
	}
	share := 100 * float64(held) / float64(root.UsedBytes)
	if share <= cfg.SpaceShare {
		return
	}
	sort.SliceStable(holders, func(i, j int) bool { return holders[i].UsedBySnapshotsBytes > holders[j].UsedBySnapshotsBytes })
	var top []string
	for _, d := range holders[:min(3, len(holders))] {
		top = append(top, fmt.Sprintf("%s %s%s", d.Name, units.IEC(d.UsedBySnapshotsBytes), snapshotCountOf(c, d.Name)))
	}
	biggest := shellWord(holders[0].Name)
	c.emit(cond{name: nameSnapshotSpace, severity: alert.Warning, pool: p.Name,
		labels:  map[string]string{"pool": p.Name},
		summary: fmt.Sprintf("snapshots hold %.0f%% of pool %s, which is %.0f%% full", share, p.Name, p.CapacityPct),
		desc: fmt.Sprintf("Snapshots hold %s of the %s used in pool %s (%.0f%%, more than rules.snapshots.space_share %.0f%%), and the pool is %.0f%% full. Biggest holders: %s. Deleting files frees nothing while snapshots keep them: destroy old snapshots (after a dry run: `zfs list -t snapshot -o name,used,creation -s creation -d 1 %s`, then `zfs destroy -nv %s@OLDEST%%NEWER`), or shorten the snapshot tool's retention.",
			units.IEC(held), units.IEC(root.UsedBytes), p.Name, share, cfg.SpaceShare, p.CapacityPct, strings.Join(top, ", "), biggest, biggest),
		evidence: map[string]string{"snapshot_bytes": itoa(held), "used_bytes": itoa(root.UsedBytes), "share_percent": fmt.Sprintf("%.0f", share), "holders": strings.Join(top, ", ")}})
}

// snapshotCountOf says " in 412 snapshots" when the snapshots fact knows.
func snapshotCountOf(c *evalCtx, dataset string) string {
	if c.h.snapshots == nil {
		return ""
	}
	for _, s := range c.h.snapshots.Datasets {
		if s.Dataset == dataset {
			return fmt.Sprintf(" in %d snapshots", s.Count)
		}
	}
	return ""
}

// listingEvidence adds when the snapshot listing was made: if zwatch's
// snapshots collector stopped too (CollectorStale), newer snapshots may
// exist that it has not seen. Judging on goes on rather than resolving:
// silence from the collector is no all-clear.
func listingEvidence(c *evalCtx, ev map[string]string) map[string]string {
	if !c.h.snapshotsAt.IsZero() {
		ev["listed_at"] = c.h.snapshotsAt.UTC().Format(time.RFC3339)
	}
	return ev
}
