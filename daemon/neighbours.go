package daemon

import (
	"log/slog"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/neighbours"
)

// warnOtherNotifiers says once, at start, when ZED or smartd on this
// machine notifies a person about the faults zwatch pages for too, and how
// to keep one notification per fault (docs/zed-smartd.md). It reads a few
// files under root, bounded, and runs nothing: it costs milliseconds and
// never stops the start. A daemon that is installed but not running yet
// (zwatch may start first at boot) is named as well.
func warnOtherNotifiers(cfg *config.Config, root string, log *slog.Logger) {
	if root == "" {
		return
	}
	r := neighbours.Detect(root)
	for _, err := range r.Problems {
		log.Debug("cannot tell whether ZED or smartd notifies too", "err", err)
	}
	selfTests := cfg.Maintenance.ShortTest != "" || cfg.Maintenance.LongTest != ""
	for _, a := range r.Advice(selfTests) {
		log.Warn(a.Message, "program", a.Program, "config", a.Config, "running", a.Running)
	}
}
