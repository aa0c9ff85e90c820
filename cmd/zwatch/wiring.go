package main

import (
	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/tools/replace"
)

// addCommands adds the commands beyond the basic four.
func addCommands(root *cobra.Command, g *globals) {
	root.AddCommand(newDisksCmd(g), newReplaceCmd(g), newProvisionCmd(g), newAlertsCmd(g), newRulesCmd(g), newNotifyCmd(g))
	root.AddCommand(newSimulateCmd(g), newFleetCmd(g), newForgetPoolCmd(g), newForgetDiskCmd(g))
	root.AddCommand(newHistoryCmd(g), newCheckCmd(g), newSilenceCmd(g))
	root.AddCommand(newAckCmd(g), newUnackCmd(g), newSnoozeCmd(g))
}

// runOptions injects the replacement guide into the notifiers: every disk
// alert carries the exact by-id replacement steps.
func runOptions() daemon.Options {
	opts := guideOptions()
	return daemon.Options{Notify: delivery.Options{Guide: func(a alert.Alert) string { return replace.GuideWith(a, opts) }}}
}

// guideOptions is what the replacement guide learns from this machine.
func guideOptions() replace.GuideOptions {
	_, ledErr := execx.LookPath("ledctl")
	return replace.GuideOptions{Ledctl: ledErr == nil}
}
