package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/tools/replace"
)

func newReplaceCmd(g *globals) *cobra.Command {
	var o replace.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "replace [POOL [OLD]]",
		Short: "Replace a failing disk, guided: pick the new disk by id, run zpool replace, follow the resilver",
		Long: `Show the failing disk and why, list the disks that can replace it (whole,
unused, large enough, compatible sector size; SMR models flagged), confirm,
run 'zpool replace POOL OLD /dev/disk/by-id/NEW' and follow the resilver
until it finishes.

OLD is the device as zpool status shows it, its GUID, by-id name or serial.
Refuses when the new disk is too small, in use, or the same as the old one.
Needs root unless --dry-run.

--dry-run --json prints the plan as JSON (docs/json.md): the failing
devices, every disk considered with the checks it failed, the new disk, and
the commands as argv arrays and copy-paste lines. It asks nothing: name OLD
or --new where there is more than one choice.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Pool = args[0]
			}
			if len(args) > 1 {
				o.Old = args[1]
			}
			if asJSON && !o.DryRun {
				return withCode(exitUsage, errors.New("--json prints the plan of a dry run: add --dry-run (a replacement that runs asks and follows the resilver as text)"))
			}
			if !o.DryRun && os.Geteuid() != 0 {
				return withCode(exitFailure, errors.New("zwatch replace needs root to run zpool replace: run it with sudo, or use --dry-run to see the commands"))
			}
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			runner := execx.New(l.Config.ZFS.CommandTimeout.D())
			o.Out, o.In = cmd.OutOrStdout(), cmd.InOrStdin()
			o.Runner = runner
			o.Status = replace.ZpoolStatus{Runner: runner, ParseJSON: zfs.ParseStatusJSON}
			o.Disks = replace.DiskFunc(func(context.Context) ([]disk.Identity, error) { return disk.Discover("/") })
			o.Probe = replace.ExecProbe{Runner: runner}
			var plan replace.Plan
			if asJSON {
				o.Out, o.In, o.Plan = io.Discard, nil, &plan
			}
			err = replace.Run(cmd.Context(), o)
			if asJSON {
				if werr := writeJSON(cmd.OutOrStdout(), plan); werr != nil {
					return werr
				}
			}
			switch {
			case errors.Is(err, replace.ErrAborted):
				return withCode(exitFailure, err)
			case errors.Is(err, replace.ErrRefused):
				return withCode(exitUsage, err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.New, "new", "", "the new disk: by-id name or path, kernel name (sdf) or serial")
	f.BoolVarP(&o.Yes, "yes", "y", false, "answer every question with the proposed default (for scripts)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the commands, run nothing")
	f.BoolVar(&asJSON, "json", false, "with --dry-run: print the plan as JSON (docs/json.md)")
	return cmd
}
