package config

import (
	"time"

	"github.com/robfig/cron/v3"
)

// MaintenanceConfig schedules the work that finds problems early: scrubs and
// SMART self-tests. Schedules are standard 5-field cron expressions
// (minute hour day-of-month month day-of-week) or descriptors like @weekly;
// an empty schedule turns that job off.
type MaintenanceConfig struct {
	Scrub     string `yaml:"scrub"`
	ShortTest string `yaml:"short_test"`
	LongTest  string `yaml:"long_test"`
	// Stagger spaces the self-tests of the disks of one vdev, so that never
	// all of them test at once: a long test slows a disk for hours.
	ShortStagger Duration `yaml:"short_stagger"`
	LongStagger  Duration `yaml:"long_stagger"`
}

// DefaultMaintenance: a monthly scrub, a weekly short and monthly long test.
func DefaultMaintenance() MaintenanceConfig {
	return MaintenanceConfig{
		Scrub:        "0 3 1 * *",
		ShortTest:    "0 2 * * 0",
		LongTest:     "0 1 15 * *",
		ShortStagger: Duration(10 * time.Minute),
		LongStagger:  Duration(12 * time.Hour),
	}
}

func (m *MaintenanceConfig) validate(path string, errs *Errors) {
	for _, s := range []struct{ key, v string }{{"scrub", m.Scrub}, {"short_test", m.ShortTest}, {"long_test", m.LongTest}} {
		if s.v == "" {
			continue
		}
		if _, err := cron.ParseStandard(s.v); err != nil {
			errs.add(path+"."+s.key, s.v, "not a cron schedule (%v): write 5 fields like \"0 3 1 * *\" (03:00 on the 1st) or @weekly, or \"\" to turn it off", err)
		}
	}
	positive(errs, path+".short_stagger", m.ShortStagger, 0)
	positive(errs, path+".long_stagger", m.LongStagger, 0)
}
