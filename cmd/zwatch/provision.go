package main

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/zwatch/zwatch/tools/provision"
)

func newProvisionCmd(g *globals) *cobra.Command {
	var fl provision.Flags
	var planFile string
	var apply, wipe, yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "provision [--plan FILE | --pool NAME --layout LAYOUT DISK...]",
		Short: "Create the initial pool safely: by-id names, right ashift, checked disks, datasets, encryption",
		Long: `Plan a new pool, check every disk, and print the exact commands; with --apply,
run them and verify the result.

Disks may be named any way (sdb, /dev/sdb, by-id, by-path, serial); the pool
is always created with /dev/disk/by-id names. Each pre-flight check prints
PASS, WARN or FAIL with the reason and the fix. Nothing is changed without
--apply, and an existing pool is never destroyed: running again reports
"already provisioned" and any differences. --json prints the plan (or the
comparison) as JSON instead (docs/json.md); it never applies.

Examples:
  zwatch provision --pool vault --layout raidz2 sdb sdc sdd sde sdf sdg \
      --dataset pictures:recordsize=1M,compression=lz4 --dataset storage \
      --dataset backup:compression=zstd-1
  zwatch provision --plan configs/provision.example.yaml --apply`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var plan *provision.Plan
			var err error
			if planFile != "" {
				if len(args) > 0 || fl.Pool != "" {
					return withCode(exitUsage, errors.New("give either --plan FILE or --pool/--layout with DISK arguments, not both"))
				}
				plan, err = provision.LoadPlan(planFile)
			} else {
				fl.Disks = args
				plan, err = provision.PlanFromFlags(fl)
			}
			if err != nil {
				return withCode(exitUsage, err)
			}
			if asJSON && apply {
				return withCode(exitUsage, errors.New("--json prints the plan and changes nothing: drop --apply, or --json to apply"))
			}
			if apply && os.Geteuid() != 0 {
				return withCode(exitFailure, errors.New("zwatch provision --apply needs root to create the pool: run it with sudo (without --apply it only prints the plan)"))
			}
			in := cmd.InOrStdin()
			if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) && fl.Passphrase {
				in = &noEcho{fd: int(f.Fd()), out: cmd.ErrOrStderr()}
			}
			opts := provision.Options{
				Plan: plan, Apply: apply, Wipe: wipe, Yes: yes,
				Out: cmd.OutOrStdout(), In: in, Host: provision.NewLiveHost(0),
			}
			if asJSON {
				rep, err := provision.PlanReport(cmd.Context(), opts)
				if rep != nil {
					if werr := writeJSON(cmd.OutOrStdout(), rep); werr != nil {
						return werr
					}
				}
				return provisionExit(err)
			}
			return provisionExit(provision.Run(cmd.Context(), opts))
		},
	}
	f := cmd.Flags()
	f.StringVar(&planFile, "plan", "", "plan file (see configs/provision.example.yaml)")
	f.StringVar(&fl.Pool, "pool", "", "pool name")
	f.StringVar(&fl.Layout, "layout", "", "mirror, raidz1, raidz2 or raidz3")
	f.IntVar(&fl.Vdevs, "vdevs", 1, "split the disks into this many vdevs of equal width")
	f.StringSliceVar(&fl.Log, "log", nil, "log (SLOG) devices; mirrored when two or more")
	f.StringSliceVar(&fl.Cache, "cache", nil, "cache (L2ARC) devices")
	f.StringSliceVar(&fl.Spares, "spare", nil, "hot spares")
	f.IntVar(&fl.Ashift, "ashift", 0, "ashift (default: from the disks' physical sector size, never below 12)")
	f.StringVar(&fl.Mountpoint, "mountpoint", "", "mount point of the root dataset")
	f.StringArrayVarP(&fl.Properties, "property", "O", nil, "root dataset property key=value (repeatable)")
	f.StringArrayVar(&fl.Datasets, "dataset", nil, "dataset NAME or NAME:key=value,key=value (repeatable)")
	f.BoolVar(&fl.Encrypt, "encrypt", false, "native encryption (aes-256-gcm) with a generated key file")
	f.BoolVar(&fl.Passphrase, "passphrase", false, "with --encrypt: a passphrase typed at boot instead of a key file")
	f.StringVar(&fl.KeyFile, "key-file", "", "with --encrypt: where to write the key file (default /etc/zfs/keys/POOL.key)")
	f.BoolVar(&fl.Normalization, "normalization", false, "set normalization=formD (Samba/macOS clients)")
	f.BoolVar(&apply, "apply", false, "run the commands (default: print the plan and change nothing)")
	f.BoolVar(&wipe, "wipe", false, "erase existing partition tables and signatures on the disks (shows what will be destroyed)")
	f.BoolVarP(&yes, "yes", "y", false, "do not ask to type the pool name before --apply")
	f.BoolVar(&asJSON, "json", false, "print the plan as JSON and change nothing (docs/json.md)")
	cmd.AddCommand(newProvisionBenchCmd())
	return cmd
}

// provisionExit maps Run's errors to exit codes: failed checks and a
// failed step are failures, not usage errors.
func provisionExit(err error) error {
	var ae *provision.ApplyError
	switch {
	case errors.Is(err, provision.ErrChecksFailed), errors.As(err, &ae):
		return withCode(exitFailure, err)
	}
	return err
}

func newProvisionBenchCmd() *cobra.Command {
	var o provision.BenchOptions
	var sizeMiB uint64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "bench POOL",
		Short: "Measure write/read throughput of a new pool per compression setting and recommend settings",
		Long: `On temporary datasets of POOL, measure sequential write (fsync at the end,
direct I/O where the platform allows) and read throughput for compression
off, lz4, zstd-1 and zstd-3 — with and without encryption with --encryption;
only encrypted on a pool whose root dataset is encrypted, as every dataset
there is — on incompressible data and on a typical compressible mix. The datasets use
primarycache=metadata so reads come from the disks, not the ARC. Prints a
table (MB/s and compression ratio), recommends settings per dataset purpose,
warns where a setting is slower than the network, then destroys the
temporary datasets. Needs root. --json prints the measurements as JSON
(docs/json.md) instead of the table.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if os.Geteuid() != 0 {
				return withCode(exitFailure, errors.New("zwatch provision bench needs root to create and destroy temporary datasets: run it with sudo"))
			}
			o.Pool, o.Size, o.Out = args[0], sizeMiB<<20, cmd.OutOrStdout()
			if asJSON {
				o.Out = io.Discard
			}
			o.Host = provision.NewLiveHost(0)
			// A progress bar only where a person watches it.
			o.Progress = term.IsTerminal(int(os.Stderr.Fd()))
			res, err := provision.Bench(cmd.Context(), o)
			if err != nil || !asJSON {
				return err
			}
			return writeJSON(cmd.OutOrStdout(), benchReport{Pool: o.Pool, SizeBytes: o.Size, NetworkMBps: o.NetworkMBps, Results: res})
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&sizeMiB, "size-mib", 1024, "size of each test file in MiB")
	f.BoolVar(&o.Encryption, "encryption", false, "also measure every setting with aes-256-gcm encryption")
	f.Float64Var(&o.NetworkMBps, "network-mbps", 118, "throughput the box serves over, MB/s (1 GbE ≈ 118)")
	f.BoolVar(&asJSON, "json", false, "print the measurements as JSON (docs/json.md)")
	return cmd
}

// benchReport is `zwatch provision bench --json`.
type benchReport struct {
	Pool        string                  `json:"pool"`
	SizeBytes   uint64                  `json:"size_bytes"`
	NetworkMBps float64                 `json:"network_mb_per_s"`
	Results     []provision.BenchResult `json:"results"`
}

// noEcho reads lines from a terminal without echoing them (passphrases).
type noEcho struct {
	fd  int
	out io.Writer
	buf bytes.Buffer
}

func (n *noEcho) Read(p []byte) (int, error) {
	if n.buf.Len() == 0 {
		line, err := term.ReadPassword(n.fd)
		io.WriteString(n.out, "\n")
		if err != nil {
			return 0, err
		}
		n.buf.Write(line)
		n.buf.WriteByte('\n')
	}
	return n.buf.Read(p)
}
