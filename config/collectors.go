package config

import (
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/internal/yamlcheck"
)

// CollectorConfig is what a collector with keys of its own may be given
// under collectors.<name>.
type CollectorConfig struct {
	// Interval is how often it runs; 0 keeps its default.
	Interval Duration `yaml:"interval"`
}

// CollectorInterval is how often the collector name runs: its
// collectors.<name>.interval, else def (its table line's default).
func (c *Config) CollectorInterval(name string, def time.Duration) time.Duration {
	if cc, ok := c.Collectors[name]; ok && cc.Interval > 0 {
		return cc.Interval.D()
	}
	return def
}

// validateCollectors checks collectors.<name> against the collectors that
// have keys of their own.
func (c *Config) validateCollectors(errs *Errors, known []CollectorInfo) {
	var names []string
	for _, k := range known {
		names = append(names, k.Name)
	}
	keys := make([]string, 0, len(c.Collectors))
	for name := range c.Collectors {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		p := "collectors." + name
		i := slices.IndexFunc(known, func(k CollectorInfo) bool { return k.Name == name })
		if i < 0 {
			have := "none"
			if len(names) > 0 {
				have = strings.Join(names, ", ")
			}
			errs.add(p, nil, "unknown collector%s; collectors with keys of their own: %s; the built-in collectors' intervals are under zfs:, smart: and disks: (man zwatch.yaml)",
				yamlcheck.Suggest(name, names), have)
			continue
		}
		least := max(known[i].Minimum, time.Second)
		if d := c.Collectors[name].Interval.D(); d != 0 && d < least {
			errs.add(p+".interval", FormatDuration(d), "must be at least %s, or 0 for the default (%s)",
				FormatDuration(least), FormatDuration(known[i].Interval))
		}
	}
}
