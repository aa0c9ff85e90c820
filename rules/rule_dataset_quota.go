package rules

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
)

func datasetQuotaRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Datasets},
		Eval:  eachDataset.each(ruleDatasetQuota),
		Config: []config.RuleSection{
			capacityConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameDatasetQuota,
			For:        5 * time.Minute,
			Thresholds: capacityConfig.thresholds("quota_warning", "quota_critical"),
			Severity:   "warning ≥ `quota_warning` ({capacity.quota_warning} %), critical ≥ `quota_critical` ({capacity.quota_critical} %)",
			Condition:  "1 − avail/limit of quota or refquota; `for` {for}",
		}},
	}
}

// nameDatasetQuota: a dataset near its quota or refquota fails writes just
// like a full pool, but only for its users. Fullness is 1 − avail/limit, as
// avail already accounts for both quota kinds.
func ruleDatasetQuota(c *evalCtx, ds *facts.DatasetState) {
	d := &ds.Dataset
	limit := d.QuotaBytes
	if limit == 0 || (d.RefquotaBytes > 0 && d.RefquotaBytes < limit) {
		limit = d.RefquotaBytes
	}
	if limit == 0 {
		return
	}
	avail := min(d.AvailBytes, limit)
	pct := 100 * (1 - float64(avail)/float64(limit))
	cfg := capacityConfig.of(c.cfg)
	var sev alert.Severity
	switch {
	case pct >= cfg.QuotaCritical:
		sev = alert.Critical
	case pct >= cfg.QuotaWarning:
		sev = alert.Warning
	default:
		return
	}
	pool := poolOfDataset(d.Name)
	c.emit(cond{name: nameDatasetQuota, severity: sev, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": d.Name},
		summary: fmt.Sprintf("dataset %s is %.0f%% of its quota", d.Name, pct),
		desc: fmt.Sprintf("%s has %s left of its %s quota; writes will fail when it runs out. Raise it with `zfs set quota=` or free space.",
			d.Name, units.IEC(avail), units.IEC(limit)),
		evidence: map[string]string{"used_bytes": itoa(d.UsedBytes), "avail_bytes": itoa(d.AvailBytes), "limit_bytes": itoa(limit)}})
}

// poolOfDataset is the pool a dataset (or snapshot) name belongs to.
func poolOfDataset(name string) string {
	name, _, _ = strings.Cut(name, "@")
	pool, _, _ := strings.Cut(name, "/")
	return pool
}

// firstAge is the first rules entry whose glob matches the dataset.
func firstAge(list []datasetAge, dataset string) (time.Duration, bool) {
	for _, a := range list {
		if ok, _ := path.Match(a.Dataset, dataset); ok {
			return a.MaxAge.D(), true
		}
	}
	return 0, false
}

// datasetIgnored: rules.datasets.ignore names datasets locked or unmounted on purpose.
func datasetIgnored(c *evalCtx, dataset string) bool {
	for _, g := range datasetsConfig.of(c.cfg).Ignore {
		if ok, _ := path.Match(g, dataset); ok {
			return true
		}
	}
	return false
}
