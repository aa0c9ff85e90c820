package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// replicationSettings are rules.replication: backup targets that stopped
// receiving. SnapshotStale and DatasetNotMounted leave the targets alone.
type replicationSettings struct {
	// Targets are the datasets snapshots are received into (globs), each
	// with the age its newest snapshot may reach.
	Targets []datasetAge `yaml:"targets" doc:"e.g. [{dataset: backup/tank/*, max_age: 26h}]" note:"Backup targets (globs) and the age their newest received snapshot may reach."`
}

// datasetAge is one dataset glob and the age its newest snapshot may reach
// (replication.targets, snapshots.max_age).
type datasetAge struct {
	// Dataset is a glob (path.Match: * does not cross /); the first entry
	// that matches a dataset decides (firstAge).
	Dataset string `yaml:"dataset"`
	// MaxAge: older is stale. 0 means the dataset is not checked.
	MaxAge config.Duration `yaml:"max_age"`
}

var replicationConfig = defineConfig("replication", replicationSettings{})

func (r replicationSettings) validate(p string, errs *config.Errors) {
	datasetAges(errs, p+".targets", r.Targets)
}

// datasetAges checks a glob → max age list.
func datasetAges(errs *config.Errors, p string, list []datasetAge) {
	for i, a := range list {
		ep := fmt.Sprintf("%s[%d]", p, i)
		glob(errs, ep+".dataset", a.Dataset, "a dataset glob such as tank/photos or backup/*")
		if d := a.MaxAge.D(); d != 0 && d < time.Minute {
			errs.Add(ep+".max_age", config.FormatDuration(d), "must be at least 1m, or 0 to leave the dataset unchecked")
		}
	}
}

func replicationStaleRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Snapshots, facts.Datasets},
		Eval:  snapshotEval(ruleReplicationStale),
		Config: []config.RuleSection{
			replicationConfig,
		},
		Alerts: []AlertInfo{{
			Name:      nameReplicationStale,
			Severity:  "warning",
			Condition: "a dataset matching `replication.targets` (first match; max_age 0 = unchecked) whose newest snapshot is older than its max_age, or that has no snapshot at all; re-judged every 15 s",
		}},
	}
}

func replicationInterruptedRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Datasets},
		Eval:  eachDataset.each(ruleReplicationInterrupted),
		Alerts: []AlertInfo{{
			Name: nameReplicationInterrupted,
			// A backup job resumes an interrupted receive at its next run.
			For:       time.Hour,
			Severity:  "warning",
			Condition: "receive_resume_token set: a resumable `zfs receive -s` was interrupted half way; `for` {for}",
		}},
	}
}

// nameReplicationStale: the backup stopped arriving. A received snapshot
// keeps its creation time from the source, so the target's newest snapshot
// says how old the newest backed-up state is.
func ruleReplicationStale(c *evalCtx, s *zfs.SnapshotStats) {
	maxAge, ok := firstAge(replicationConfig.of(c.cfg).Targets, s.Dataset)
	if !ok || maxAge == 0 {
		return
	}
	pool := poolOfDataset(s.Dataset)
	name := shellWord(s.Dataset)
	var summary, what string
	ev := map[string]string{"max_age": units.Age(maxAge), "count": fmt.Sprint(s.Count)}
	if s.Count == 0 {
		summary = fmt.Sprintf("backup target %s has no snapshots", s.Dataset)
		what = fmt.Sprintf("Backup target %s has no snapshot at all, so nothing was ever received into it (or it was all pruned)", s.Dataset)
	} else {
		age := c.now.Sub(s.Newest)
		if age <= maxAge {
			return
		}
		summary = fmt.Sprintf("backup target %s: newest snapshot is %s old", s.Dataset, units.Age(age))
		what = fmt.Sprintf("The newest snapshot received into %s, %s@%s, was taken %s (%s ago); rules.replication.targets allows %s",
			s.Dataset, s.Dataset, s.NewestName, s.Newest.UTC().Format(time.RFC3339), units.Age(age), units.Age(maxAge))
		ev["newest"], ev["newest_name"] = s.Newest.UTC().Format(time.RFC3339), s.NewestName
	}
	c.emit(cond{name: nameReplicationStale, severity: alert.Warning, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": s.Dataset},
		summary: summary,
		desc: what + ". Replication has stopped: check the job that sends to it (syncoid, zrepl — `zrepl status` —, a zfs send | zfs receive script) and its log on the sending machine. " +
			fmt.Sprintf("What arrived last: `zfs list -t snapshot -o name,creation -s creation -d 1 %s | tail -3`.", name),
		evidence: listingEvidence(c, ev)})
}

// nameReplicationInterrupted: a resumable receive stopped half way (the
// link dropped, the sender was killed). The partial state holds space and
// the next incremental send into the dataset fails until it is resumed or
// abandoned.
func ruleReplicationInterrupted(c *evalCtx, d *facts.DatasetState) {
	if d.ReceiveResumeToken == "" {
		return
	}
	pool := poolOfDataset(d.Name)
	name := shellWord(d.Name)
	c.emit(cond{name: nameReplicationInterrupted, severity: alert.Warning, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": d.Name},
		summary: fmt.Sprintf("receive into %s was interrupted", d.Name),
		desc: fmt.Sprintf("A resumable receive into %s stopped half way; until it is resumed or abandoned, further sends into it fail. Resume it from where it stopped, on the sending side (through ssh as your backup job does):\n    zfs send -t %s | zfs receive -s %s\nor abandon it, freeing the partial state: `zfs receive -A %s`.",
			d.Name, shellWord(d.ReceiveResumeToken), name, name),
		evidence: map[string]string{"receive_resume_token": d.ReceiveResumeToken}})
}
