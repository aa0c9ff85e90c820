package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/zwatch/zwatch/internal/mantest"
)

// TestGenDocs: the hidden gen-docs command writes a page for zwatch and for
// every command a person can run, zwatch.yaml(5) and the three completions;
// man and lexgrog find nothing wrong with any page.
func TestGenDocs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1796169600") // 2026-12-02
	if out, errOut, code := run(t, "gen-docs", "--out", dir, "--example", "../../configs/zwatch.example.yaml"); code != exitOK {
		t.Fatalf("gen-docs: %d\n%s%s", code, out, errOut)
	}
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	root := newRoot(&globals{})
	root.InitDefaultCompletionCmd()
	walk(root)
	pages, err := filepath.Glob(filepath.Join(dir, "man1", "*.1"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, p := range pages {
		have[filepath.Base(p)] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no page %s", w)
		}
		delete(have, w)
	}
	for extra := range have {
		t.Errorf("page %s is for no command a person can run", extra)
	}
	if len(want) < 20 {
		t.Fatalf("only %d commands found: %v", len(want), want)
	}
	top, err := os.ReadFile(filepath.Join(dir, "man1", "zwatch.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exitStatuses {
		if !strings.Contains(string(top), ".B "+strconv.Itoa(e.code)+"\n") {
			t.Errorf("zwatch.1 does not list exit status %d", e.code)
		}
	}
	if !strings.Contains(string(top), `.TH "ZWATCH" "1" "Dec 2026"`) {
		t.Errorf("zwatch.1 is not dated by SOURCE_DATE_EPOCH:\n%.200s", top)
	}
	for name, head := range map[string]string{
		"zwatch.bash": "# bash completion V2 for zwatch",
		"_zwatch":     "#compdef zwatch",
		"zwatch.fish": "# fish completion for zwatch",
	} {
		b, err := os.ReadFile(filepath.Join(dir, "completion", name))
		if err != nil || !strings.HasPrefix(string(b), head) {
			t.Errorf("completion %s: %v, starts %.40q", name, err, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "bash", "-n", filepath.Join(dir, "completion", "zwatch.bash")).CombinedOutput(); err != nil {
		t.Errorf("bash -n zwatch.bash: %v\n%s", err, out)
	}
	mantest.Check(t, append(pages, filepath.Join(dir, "man5", "zwatch.yaml.5"))...)
}

func TestGenDocsNeedsOut(t *testing.T) {
	if _, errOut, code := run(t, "gen-docs"); code != exitUsage || !strings.Contains(errOut, "--out DIR is required") {
		t.Fatalf("code %d: %s", code, errOut)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, errOut, code := run(t, "gen-docs", "--out", t.TempDir()); code != exitUsage || !strings.Contains(errOut, `SOURCE_DATE_EPOCH="yesterday"`) {
		t.Fatalf("code %d: %s", code, errOut)
	}
}

// TestFlagValueNames: pflag takes the first back-quoted word of a flag's
// usage as the name of its value (`--input FILE`); a back-quoted command in
// a usage once made `zwatch status --help` print `--input zpool status`.
func TestFlagValueNames(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
				t.Errorf("%s --%s shows its value as %q: back-quote one word (FILE, DURATION), or quote commands with ' '", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&globals{}))
}
