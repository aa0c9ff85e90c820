package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/disk"
)

func newForgetDiskCmd(g *globals) *cobra.Command {
	var host string
	cmd := &cobra.Command{
		Use:   "forget-disk SERIAL",
		Short: "Say a disk that left the machine is gone for good, so its DiskVanished alert ends",
		Long: `Say that the disk with serial SERIAL (or its /dev/disk/by-id name), which
zwatch has seen and now reports as DiskVanished, was removed on purpose
(sold, moved to another machine, wiped). Its DiskVanished alert resolves
and zwatch no longer remembers it; if it is attached again it is simply
listed again.

A disk that comes and goes on purpose (a rotated USB backup disk) belongs
under rules.disks.ignore instead.

The request goes to the running zwatch (or, when none runs, waits in its
store for the next start). It needs the bus credentials in the state
directory, so only the user zwatch runs as (root) can send it. With --host
it forgets the disk of another host of the fleet (run it on the server).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := diskToForget(args[0])
			if err != nil {
				return withCode(exitUsage, err)
			}
			host, err := publishForget(cmd, g, host, facts.DiskForget, "forget-disk", facts.DiskForgetData{Serial: name, By: whoAmI()})
			if err != nil {
				return fmt.Errorf("forget disk %s: %w", name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "zwatch forgets disk %s on %s: its DiskVanished alert resolves (see zwatch alerts).\n", name, host)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the host whose disk it is (default: this host's host:)")
	return cmd
}

// diskToForget checks the name given: a serial, a WWN or a by-id name
// (with or without /dev/disk/by-id/), as the DiskVanished alert shows.
func diskToForget(arg string) (string, error) {
	name := strings.TrimSpace(arg)
	if rest, ok := strings.CutPrefix(name, disk.ByIDDir+"/"); ok {
		name = rest
	}
	switch {
	case name == "":
		return "", fmt.Errorf("disk name is empty: give the serial the DiskVanished alert shows")
	case len(name) > 255:
		return "", fmt.Errorf("disk name %.20q...: longer than 255 characters", name)
	case strings.ContainsAny(name, "/\\") || name != filepath.Base(name):
		return "", fmt.Errorf("%q is a path: give the disk's serial, or its name under %s", arg, disk.ByIDDir)
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("disk name %q holds a space or control character: give the serial as the DiskVanished alert shows it", name)
		}
	}
	return name, nil
}
