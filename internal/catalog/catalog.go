// Package catalog joins zwatch's extension tables — the rules, the
// notification channels and the collectors with keys of their own — into what config validates a file against. It is
// the one place that knows every table, so that config, rules and notifiers
// need not know each other.
package catalog

import (
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
)

// Config is the catalogue config.Load and config.Parse check a file against.
func Config() config.Catalog {
	var cat config.Catalog
	catalogue := rules.Catalogue()
	cat.Rules = rules.AlertNames(catalogue)
	cat.RuleSections = rules.ConfigSections(catalogue)
	for _, s := range notifiers.Services() {
		cat.Channels = append(cat.Channels, s)
	}
	cat.Collectors = collectors.Keys(collectors.Table())
	return cat
}
