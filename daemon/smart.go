package daemon

import (
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
)

// SmartConfig maps the smart config section onto the collector's config.
func SmartConfig(cfg *config.Config) collectors.SmartConfig {
	sc := collectors.SmartConfig{Smartctl: cfg.Smart.Smartctl, Timeout: cfg.Smart.Timeout.D()}
	for _, d := range cfg.Smart.Devices {
		sc.Devices = append(sc.Devices, collectors.SmartDevice{Device: d.Device, Type: d.Type})
	}
	return sc
}

func newSmartCollector(cfg *config.Config) *collectors.SmartCollector {
	return collectors.NewSmartCollector(SmartConfig(cfg), nil)
}
