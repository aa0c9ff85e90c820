// Package mantest checks manual pages with the tools Debian checks them
// with: man-db's `man --warnings` (groff's warnings, as lintian runs it) and
// lexgrog (the NAME line that whatis and apropos index).
package mantest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The programs Check runs (Debian packages man-db and groff-base).
const (
	manPath     = "/usr/bin/man"
	lexgrogPath = "/usr/bin/lexgrog"
)

// Require skips the test when man-db is not installed, or fails it under
// ZW_REQUIRE_TOOLS=1, so that CI never passes without running the checks.
func Require(t *testing.T) {
	t.Helper()
	for _, tool := range []string{manPath, lexgrogPath} {
		if _, err := os.Stat(tool); err != nil {
			if os.Getenv("ZW_REQUIRE_TOOLS") == "1" {
				t.Fatalf("ZW_REQUIRE_TOOLS=1 but %s is missing: install man-db and groff-base (scripts/install-deps.sh --test)", tool)
			}
			t.Skipf("%s not installed: the manual page checks are skipped (install man-db and groff-base to run them)", tool)
		}
	}
}

// Check fails the test for each page that groff warns about when man
// formats it, or whose NAME section lexgrog cannot read as "name \- what".
func Check(t *testing.T, pages ...string) {
	t.Helper()
	Require(t)
	for _, page := range pages {
		// As lintian runs it (checks/documentation/manual): UTF-8 input,
		// 80 columns, groff's intermediate output discarded, warnings kept.
		out, err := run(t, []string{"LC_ALL=C.UTF-8", "MANWIDTH=80", "MANROFFSEQ="},
			manPath, "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page)
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("man --warnings -l %s: %v\n%s", page, err, out)
		}
		out, err = run(t, []string{"LC_ALL=C.UTF-8"}, lexgrogPath, page)
		if err != nil || !strings.Contains(out, " - ") {
			t.Errorf("lexgrog %s: %v: %s", page, err, out)
		}
	}
}

// run runs argv with env added, bounded in time, and returns its stderr
// (man) or stdout and stderr (lexgrog prints its result on stdout).
func run(t *testing.T, env []string, argv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	if argv[0] == lexgrogPath {
		cmd.Stdout = &stdout
	}
	err := cmd.Run()
	return stdout.String() + stderr.String(), err
}
