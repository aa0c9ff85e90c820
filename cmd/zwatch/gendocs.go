package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/daemon"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/manpage"
)

// exitStatuses are the exit codes as zwatch(1) lists them (README.md says the same).
var exitStatuses = []struct {
	code  int
	means string
}{
	{exitOK, "Success (for status: every pool is healthy)."},
	{exitFailure, "A runtime error, or status found a problem."},
	{exitUsage, "Bad flags or arguments, or an invalid config."},
	{exitNoData, "status could not read the pools (zpool missing or hung, or an --input that is empty, not a zpool status output, a directory or device, or over 64 MiB), or a disks --input or rules eval FILE could not be read the same way."},
}

// rootDescription is the DESCRIPTION of zwatch(1).
const rootDescription = `zwatch watches the ZFS pools and disks of a machine and tells a person, on
their phone or by email, the moment data is at risk, with the exact commands
that fix it. It follows zpool events so that a pulled or failing disk is seen
in about a second, reads SMART through smartctl, follows the kernel log, and
keeps every notification in a durable outbox until a channel accepts it.

zwatch run is the daemon; the Debian package runs it as the systemd unit
zwatch.service with the config /etc/zwatch/zwatch.yaml. The other commands
show what it sees (status, disks, alerts, history export), test the channels
(notify test), replace a failing disk (replace), create a pool safely
(provision), and replay recorded failures (simulate). Each has its own page,
named below.`

// newGenDocsCmd writes the manual pages and shell completions the Debian
// package installs (packaging/build-deb.sh). It is hidden: only a build
// runs it, from a checkout, since zwatch.yaml(5) is made from the example
// config there.
func newGenDocsCmd(g *globals) *cobra.Command {
	var out, example string
	cmd := &cobra.Command{
		Use:    "gen-docs --out DIR [--example FILE]",
		Short:  "Write the manual pages and shell completions (for packaging)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return withCode(exitUsage, errors.New("gen-docs: --out DIR is required (the pages go to DIR/man1, DIR/man5, the completions to DIR/completion)"))
			}
			date, err := sourceDate()
			if err != nil {
				return withCode(exitUsage, err)
			}
			ex, err := os.ReadFile(example)
			if err != nil {
				return withCode(exitUsage, fmt.Errorf("gen-docs: the example config: %w (run it from a checkout, or give --example FILE)", err))
			}
			return genDocs(out, ex, manpage.Header{Date: date, Source: "zwatch " + daemon.Version, Manual: "zwatch manual"})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write man1/, man5/ and completion/ into")
	cmd.Flags().StringVar(&example, "example", "configs/zwatch.example.yaml", "the commented example config, which zwatch.yaml(5) is made from")
	return cmd
}

// sourceDate is SOURCE_DATE_EPOCH (reproducible builds), else now, in UTC
// so that a page's date does not depend on the build machine's zone.
func sourceDate() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Now().UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: not seconds since 1970 (e.g. $(git log -1 --format=%%ct))", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// genDocs writes every command's page, zwatch.yaml(5) and the bash, zsh and
// fish completions under dir.
func genDocs(dir string, example []byte, h manpage.Header) error {
	quiet := &globals{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	var exit strings.Builder
	for _, e := range exitStatuses {
		fmt.Fprintf(&exit, ".TP\n.B %d\n%s\n", e.code, e.means)
	}
	extras := map[string][]manpage.Extra{"zwatch": {
		{Heading: "EXIT STATUS", Roff: exit.String()},
		{Heading: "FILES", Roff: ".TP\n.B " + strings.ReplaceAll(config.DefaultPath, "-", `\-`) + "\nThe configuration, described in\n.BR zwatch.yaml (5).\n" +
			".TP\n.B /var/lib/zwatch\nThe state: the embedded bus with the outbox of notifications, the alert state and the history.\n" +
			".TP\n.B /usr/lib/systemd/system/zwatch.service\nThe systemd unit that runs\n.BR \"zwatch run\" .\n"},
	}}
	manRoot := newRoot(quiet)
	manRoot.Long = rootDescription
	pages, err := manpage.CommandPages(manRoot, h, extras, []string{"zwatch.yaml(5)"})
	if err != nil {
		return err
	}
	conf, err := manpage.ConfigPage(example, catalog.Config(), h)
	if err != nil {
		return err
	}
	files := map[string][]byte{filepath.Join("man5", "zwatch.yaml.5"): conf}
	for name, p := range pages {
		files[filepath.Join("man1", name)] = p
	}
	root := newRoot(quiet)
	root.InitDefaultCompletionCmd()
	for name, gen := range map[string]func(*bytes.Buffer) error{
		"zwatch.bash": func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) },
		"_zwatch":     func(b *bytes.Buffer) error { return root.GenZshCompletion(b) },
		"zwatch.fish": func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) },
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("gen-docs: %s: %w", name, err)
		}
		files[filepath.Join("completion", name)] = b.Bytes()
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("gen-docs: %w", err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("gen-docs: %w", err)
		}
	}
	return nil
}
