// Command zwatch watches ZFS storage boxes and tells a person, on their phone
// or by email, the moment their data is at risk — and how to fix it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
)

// Exit codes, documented in README.md.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime error, or `status` found a problem
	exitUsage   = 2 // bad flags or arguments, or an invalid config
	exitNoData  = 3 // `status` could not read the pools (zpool missing or hung)
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// globals are the flags every command shares.
type globals struct {
	configPath string
	configSet  bool
	stateDir   string
	logLevel   string
	stdout     io.Writer
	stderr     io.Writer
	// started is when the process started, for bounds that count from
	// there (`check -t`); zero means when the command started.
	started time.Time
}

// loadConfig reads the config named by --config, or the default path when it
// exists, or the built-in defaults. --state-dir overrides the file.
func (g *globals) loadConfig() (*config.Loaded, error) {
	var l *config.Loaded
	path := g.configPath
	if !g.configSet {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			l = &config.Loaded{Config: config.Default(), Path: "(built-in defaults)"}
		}
	}
	if l == nil {
		var err error
		if l, err = config.Load(path, catalog.Config()); err != nil {
			return nil, withCode(exitUsage, err)
		}
	}
	if g.stateDir != "" {
		l.Config.StateDir = g.stateDir
	}
	if g.logLevel != "" {
		l.Config.Log.Level = g.logLevel
	}
	return l, nil
}

func (g *globals) logger(c *config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Log.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Log.Format == "json" {
		return slog.New(slog.NewJSONHandler(g.stderr, opts))
	}
	return slog.New(slog.NewTextHandler(g.stderr, opts))
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "zwatch",
		Short:         "Watch ZFS pools and disks; alert a person, with the fix, when data is at risk",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			g.configSet = cmd.Flags().Changed("config")
		},
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.configPath, "config", "c", config.DefaultPath, "config file")
	pf.StringVar(&g.stateDir, "state-dir", "", "state directory for the embedded bus (overrides state_dir; default /var/lib/zwatch)")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (overrides log.level)")
	root.AddCommand(newRunCmd(g), newCheckConfigCmd(g), newVersionCmd(g), newStatusCmd(g))
	addCommands(root, g)
	root.AddCommand(newHashPasswordCmd(g))
	root.AddCommand(newGenDocsCmd(g)) // hidden: the package build's man pages and completions
	return root
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{stdout: os.Stdout, stderr: os.Stderr, started: time.Now()}
	os.Exit(execute(ctx, g, os.Args[1:]))
}

func execute(ctx context.Context, g *globals, args []string) int {
	root := newRoot(g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errReported) {
		fmt.Fprintln(g.stderr, "zwatch:", err)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isUsageError(err) {
		return exitUsage
	}
	return exitFailure
}
