package zfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A derivation turns a real output into what it looks like after being
// pasted somewhere: the pasted variants the tests read are made from the
// verbatim fixtures of testdata/zpool-status, never written by hand.
type derivation struct {
	name   string
	derive func(string) string
}

// perLine prefixes every line of s with prefix(i), as a logger does.
func perLine(prefix func(i int) string) func(string) string {
	return func(s string) string {
		var sb strings.Builder
		for i, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			sb.WriteString(prefix(i) + l + "\n")
		}
		return sb.String()
	}
}

func eachLine(f func(string) string) func(string) string {
	return func(s string) string {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = f(l)
		}
		return strings.Join(lines, "\n") + "\n"
	}
}

// expandTabs turns tabs into spaces up to the next 8-column stop, as a
// terminal shows them and a copy from it keeps them.
func expandTabs(l string) string {
	var sb strings.Builder
	col := 0
	for _, r := range l {
		if r == '\t' {
			n := 8 - col%8
			sb.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		sb.WriteRune(r)
		col++
	}
	return sb.String()
}

var pasteDerivations = []derivation{
	{"syslog", perLine(func(i int) string { return fmt.Sprintf("Dec  1 12:%02d:%02d nas zed[2841]: ", i/60%60, i%60) })},
	{"syslog-rsyslog-escaped-tabs", func(s string) string {
		return perLine(func(i int) string { return fmt.Sprintf("Dec 14 03:00:%02d nas zpool-report[77]: ", i%60) })(strings.ReplaceAll(s, "\t", "#011"))
	}},
	{"journalctl-short", perLine(func(i int) string { return fmt.Sprintf("Dec 01 12:00:%02d nas zfs-health.sh[4242]: ", i%60) })},
	{"journalctl-short-iso", perLine(func(i int) string {
		return fmt.Sprintf("2024-12-01T12:00:%02d+0100 nas zfs-health.sh[4242]: ", i%60)
	})},
	{"rsyslog-rfc3339", perLine(func(i int) string {
		return fmt.Sprintf("2024-12-01T12:00:%02d.%06d+01:00 nas zed: ", i%60, i*7919%1000000)
	})},
	{"docker-timestamps", perLine(func(i int) string { return fmt.Sprintf("2024-12-01T12:00:%02d.%09dZ ", i%60, i*104729) })},
	{"iso-space-comma", perLine(func(i int) string { return fmt.Sprintf("2024-12-01 12:00:%02d,%03d ", i%60, i) })},
	{"chat-irc", perLine(func(i int) string { return fmt.Sprintf("[12:%02d:%02d] <alice> ", i/60%60, i%60) })},
	{"chat-ampm", perLine(func(i int) string { return fmt.Sprintf("[%d:%02d PM] ", 1+i/60%12, i%60) })},
	{"docker-compose", perLine(func(int) string { return "zfs-check-1  | " })},
	{"markdown-quote", perLine(func(int) string { return "> " })},
	{"compose-around-docker-timestamps", func(s string) string {
		s = perLine(func(i int) string { return fmt.Sprintf("2025-03-02T08:15:%02d.%03dZ ", i%60, i%1000) })(s)
		return perLine(func(int) string { return "zwatch-1  | " })(s)
	}},
	{"markdown-fence", func(s string) string { return "Here is what I get:\n\n```\n" + s + "```\n\nAny idea what is wrong?\n" }},
	{"markdown-fence-prompt", func(s string) string { return "```console\n$ zpool status\n" + s + "$\n```\n" }},
	{"markdown-fence-open-only", func(s string) string { return "~~~\n" + s }},
	{"crlf", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
	{"bom-crlf", func(s string) string { return "\ufeff" + strings.ReplaceAll(s, "\n", "\r\n") }},
	{"tabs-expanded", eachLine(expandTabs)},
	{"tabs-as-4-spaces", func(s string) string { return strings.ReplaceAll(s, "\t", "    ") }},
	{"tabs-as-2-spaces", func(s string) string { return strings.ReplaceAll(s, "\t", "  ") }},
	{"tabs-as-1-space", func(s string) string { return strings.ReplaceAll(s, "\t", " ") }},
	{"nbsp-indent", eachLine(func(l string) string { return strings.ReplaceAll(expandTabs(l), "  ", " \u00a0") })},
	{"chat-in-fence-crlf", func(s string) string {
		s = perLine(func(i int) string { return fmt.Sprintf("[12:00:%02d] ", i%60) })(s)
		return strings.ReplaceAll("look:\n```\n"+s+"```\n", "\n", "\r\n")
	}},
	{"syslog-tabs-expanded", func(s string) string {
		return perLine(func(i int) string { return fmt.Sprintf("Jan  9 23:59:%02d box zed[9]: ", i%60) })(eachLine(expandTabs)(s))
	}},
}

// textFixtures are the real text status outputs that describe a pool.
func textFixtures(t *testing.T) []statusFixture {
	var out []statusFixture
	for _, f := range statusFixtures(t) {
		if !f.json {
			out = append(out, f)
		}
	}
	return out
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func modelJSON(t *testing.T, pools []*Pool) string {
	t.Helper()
	b, err := json.MarshalIndent(pools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parsePasted(t *testing.T, s string) ([]*Pool, error) {
	t.Helper()
	u := Unpaste([]byte(s))
	if t := bytes.TrimSpace(u); len(t) > 0 && t[0] == '{' {
		return ParseStatusJSON(bytes.NewReader(u))
	}
	return ParseStatusTextIn(bytes.NewReader(u), fixtureLoc)
}

// Unpaste must leave every real output as it reads: each status capture
// gives the very model it gives unpasted (the goldens), and other saved
// outputs zwatch reads come back byte for byte.
func TestUnpasteLeavesRealOutputAlone(t *testing.T) {
	for _, f := range statusFixtures(t) {
		want, err := parseFixture(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parsePasted(t, mustRead(t, f.path))
		if err != nil {
			t.Errorf("%s: %v", f.rel, err)
			continue
		}
		if a, b := modelJSON(t, want), modelJSON(t, got); a != b {
			t.Errorf("%s reads differently after Unpaste:\n%s", f.rel, firstDiff(a, b))
		}
	}
	for _, dir := range []string{"smartctl", "zpool-list", "captured"} {
		_ = filepath.WalkDir(filepath.Join(repoTestdata, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || isStatusCaptureName(p) || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".sh") {
				return err
			}
			if isKernelLogCapture(p) {
				return nil // read by kernlog.ReadSaved, never through Unpaste
			}
			data, _ := os.ReadFile(p)
			if !bytes.HasSuffix(data, []byte("\n")) || bytes.Contains(data, []byte(" \n")) || bytes.Contains(data, []byte("\t\n")) {
				return nil // Unpaste may end the last line or trim a line's end
			}
			if got := Unpaste(data); !bytes.Equal(got, data) {
				t.Errorf("%s changed by Unpaste:\n%s", p, firstDiff(string(data), string(got)))
			}
			return nil
		})
	}
}

// Every real output, pasted through a log, a chat or markdown, reads as the
// same model as the output itself.
func TestPastedVariantsReadAsTheOriginal(t *testing.T) {
	n := 0
	for _, f := range textFixtures(t) {
		orig := mustRead(t, f.path)
		want, err := parseFixture(f)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON := modelJSON(t, want)
		for _, d := range pasteDerivations {
			got, err := parsePasted(t, d.derive(orig))
			if err != nil {
				t.Errorf("%s as %s: %v", f.rel, d.name, err)
				continue
			}
			if g := modelJSON(t, got); g != wantJSON {
				t.Errorf("%s as %s reads differently:\n%s", f.rel, d.name, firstDiff(wantJSON, g))
			}
			n++
		}
	}
	t.Logf("%d pasted variants of real outputs read as their originals", n)
}

// cutAt returns s from the first line for which at holds, or "".
func cutAt(s string, at func(line string) bool) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if at(l) {
			return strings.Join(lines[i:], "")
		}
	}
	return ""
}

func isConfigLine(l string) bool {
	label, _, ok := sectionHeader(strings.TrimRight(l, "\n"))
	return ok && label == "config"
}

func isNameHeader(l string) bool {
	f := strings.Fields(l)
	return len(f) >= 2 && f[0] == "NAME" && f[1] == "STATE"
}

// A fragment that starts at `config:` or at the NAME/STATE header reads as
// its pool: named after the root row, the same tree, the same data errors
// when the `errors:` line is in it and "unknown" when it is not.
func TestPastedFragments(t *testing.T) {
	n := 0
	for _, f := range textFixtures(t) {
		orig := mustRead(t, f.path)
		all, err := parseFixture(f)
		if err != nil || len(all) == 0 || all[0].Root == nil {
			continue
		}
		want := all[0]
		for _, cut := range []struct {
			name string
			at   func(string) bool
		}{{"from-config", isConfigLine}, {"from-header", isNameHeader}} {
			frag := cutAt(orig, cut.at)
			if frag == "" {
				continue
			}
			// Only the first pool's table: up to its errors: line, and
			// without it (a paste of the table alone).
			if i := strings.Index(frag, "\n  pool:"); i >= 0 {
				frag = frag[:i+1]
			}
			tableOnly := frag
			if i := strings.Index(frag, "\nerrors:"); i >= 0 {
				tableOnly = frag[:i+1]
			}
			for _, v := range []struct {
				name, text    string
				errorsUnknown bool
			}{{cut.name, frag, want.ErrorsUnknown}, {cut.name + "-table-only", tableOnly, true}} {
				for _, d := range append([]derivation{{"as-is", func(s string) string { return s }}}, pasteDerivations...) {
					got, err := parsePasted(t, d.derive(v.text))
					label := fmt.Sprintf("%s %s %s", f.rel, v.name, d.name)
					if err != nil || len(got) != 1 {
						t.Errorf("%s: %d pools, %v", label, len(got), err)
						continue
					}
					checkFragment(t, label, got[0], want, v.errorsUnknown)
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no fragments derived")
	}
	t.Logf("%d pasted fragments of real outputs read as their pool", n)
}

func checkFragment(t *testing.T, label string, got, want *Pool, errorsUnknown bool) {
	t.Helper()
	if got.Name != want.Root.Name || got.State != want.Root.State {
		t.Errorf("%s: pool %q %s, want %q %s", label, got.Name, got.State, want.Root.Name, want.Root.State)
	}
	tree := func(p *Pool) string {
		return modelJSON(t, []*Pool{{Root: p.Root, Vdevs: p.Vdevs, Logs: p.Logs, Cache: p.Cache, Spares: p.Spares, Special: p.Special, Dedup: p.Dedup}})
	}
	if a, b := tree(want), tree(got); a != b {
		t.Errorf("%s: tree differs:\n%s", label, firstDiff(a, b))
	}
	if got.ErrorsUnknown != errorsUnknown {
		t.Errorf("%s: errors unknown %v, want %v", label, got.ErrorsUnknown, errorsUnknown)
	}
	if !errorsUnknown && got.DataErrors.Count != want.DataErrors.Count {
		t.Errorf("%s: %d data errors, want %d", label, got.DataErrors.Count, want.DataErrors.Count)
	}
	if len(got.Notes) == 0 || got.Notes[0] != PastedPoolNote {
		t.Errorf("%s: notes %q lack %q", label, got.Notes, PastedPoolNote)
	}
}

// Text that is no status stays no status, pasted or not, and Unpaste never
// turns a one-line message into something else.
func TestUnpasteNotStatus(t *testing.T) {
	for _, in := range []string{
		"all pools are healthy\n",
		"no pools available\n",
		"[12:00:01] all pools are healthy\n",
		"```\nno pools available\n```\n",
	} {
		pools, err := parsePasted(t, in)
		if err != nil || len(pools) != 0 {
			t.Errorf("%q: %d pools, %v", in, len(pools), err)
		}
	}
	for _, in := range []string{
		"[    0.000000] Linux version 6.1.0-13-amd64\n[    1.234567] ZFS: Loaded module v2.1.11-1, ZFS pool version 5000\n[    2.000000] sd 0:0:0:0: [sda] Attached SCSI disk\n",
		"Dec  1 12:00:01 nas zed[1]: eid=5 class=statechange pool='tank' vdev=sda state=FAULTED\n",
		"Dec  1 12:00:01 nas sh[1]:   pool: tank\nDec  1 12:00:01 nas sh[1]: rebooting now\n",
		"hello\nworld\n",
		"```\n```\n",
	} {
		if strings.TrimSpace(string(Unpaste([]byte(in)))) == "" {
			continue // nothing left: the commands call that empty
		}
		if pools, err := parsePasted(t, in); err != ErrNotStatus {
			t.Errorf("%q read as status: %d pools, %v", in, len(pools), err)
		}
	}
}

// isKernelLogCapture names the saved kernel logs of capture step l (dmesg,
// journalctl -k, /dev/kmsg records): their log prefixes are the content.
func isKernelLogCapture(p string) bool {
	b := filepath.Base(p)
	return strings.Contains(b, ".dmesg") || strings.Contains(b, ".journalctl-k") || strings.Contains(b, ".kmsg")
}
