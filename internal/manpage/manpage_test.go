package manpage

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/mantest"
	"github.com/zwatch/zwatch/internal/yamlcheck"
)

const examplePath = "../../configs/zwatch.example.yaml"

var testHeader = Header{Date: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Source: "zwatch test", Manual: "zwatch manual"}

// plain undoes the escapes the pages use, to search them as a person reads them.
func plain(roff string) string {
	return strings.NewReplacer(`\%`, "", `\-`, "-", `\fB`, "", `\fR`, "", `\fP`, "", `\e`, `\`).Replace(roff)
}

// TestConfigPageShowsEveryKey ties zwatch.yaml(5) to the config structs, as
// TestExampleConfigIsValidAndComplete ties the example: every key zwatch
// knows has an entry (or is a key of a one-line mapping's entry), and every
// channel type, channel key and alert name is on the page.
func TestConfigPageShowsEveryKey(t *testing.T) {
	example, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.Config()
	page, err := ConfigPage(example, cat, testHeader)
	if err != nil {
		t.Fatal(err)
	}
	text := plain(string(page))
	_, sections, err := ConfigEntries(example)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, s := range sections {
		for _, e := range s.Entries {
			shown[e.Path] = true
			for _, k := range e.Keys {
				shown[e.Path+"."+k] = true
			}
			if !strings.Contains(text, ".B "+e.Path+"\n") {
				t.Errorf("entry %s is not a tagged paragraph of the page", e.Path)
			}
		}
	}
	unmarshaler := reflect.TypeFor[yaml.Unmarshaler]()
	rulesType := reflect.TypeFor[config.RulesConfig]()
	var walk func(tp reflect.Type, prefix string)
	walk = func(tp reflect.Type, prefix string) {
		for name, f := range yamlcheck.Fields(tp) {
			p := strings.TrimPrefix(prefix+"."+name, ".")
			// A mapping of keys below needs no entry of its own when its keys
			// have them; rules: decodes itself, its keys as a mapping's.
			isMapping := f.Type == rulesType || f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(unmarshaler)
			if !shown[p] && !isMapping {
				t.Errorf("zwatch.yaml(5) does not show key %s", p)
			}
			if isMapping {
				walk(f.Type, p)
			}
		}
	}
	walk(reflect.TypeFor[config.Config](), "")
	// The sections the rules own (rules.kernel, ...), which no config struct has.
	if len(cat.RuleSections) == 0 {
		t.Error("the catalogue has no rule sections")
	}
	for _, s := range cat.RuleSections {
		walk(reflect.TypeOf(s.Default()), "rules."+s.Key())
	}
	for _, ct := range cat.Channels {
		if !strings.Contains(text, ".B type: "+ct.Name()+"\n") {
			t.Errorf("channel type %s is missing", ct.Name())
		}
		for _, k := range ct.Keys() {
			if !strings.Contains(text, ".BR "+k+" ") {
				t.Errorf("key %s of channel type %s is missing", k, ct.Name())
			}
		}
	}
	for _, k := range ChannelKeys() {
		if !strings.Contains(text, ".BR "+k+" ") {
			t.Errorf("channel key %s is missing", k)
		}
	}
	for _, name := range cat.Rules {
		if !strings.Contains(text, ".BR "+name+" ") {
			t.Errorf("alert name %s is missing", name)
		}
	}
	path := filepath.Join(t.TempDir(), "zwatch.yaml.5")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	mantest.Check(t, path)
}

func TestCommentProseAndExamples(t *testing.T) {
	got := comment("# Disks to read. Empty: every disk.\n# here:\n# devices:\n#   - device: /dev/sda\n#     type: sat\n#\n# After.")
	want := []Block{
		{Lines: []string{"Disks to read. Empty: every disk.", "here:"}},
		{Example: true, Lines: []string{"devices:", "  - device: /dev/sda", "    type: sat"}},
		{Lines: []string{"", "After."}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

func TestRoffEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`.starts with a dot`: `\&.starts with a dot`,
		`a\b`:                `a\eb`,
		"55 °C → 60":         `55 \[u00B0]C \[u2192] 60`,
		"'quote":             `\&'quote`,
	} {
		if got := text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := code("--state-dir"); got != `\-\-state\-dir` {
		t.Errorf("code: %q", got)
	}
}

// TestCommandPagesReadLikeHelp: a command's plain-text help, with Markdown's
// special characters and an indented example, comes out on its page as it
// reads in --help, and groff has nothing to warn about.
func TestCommandPagesReadLikeHelp(t *testing.T) {
	root := &cobra.Command{Use: "zwatch", Short: "Watch ZFS"}
	var stateDir string
	root.PersistentFlags().StringVar(&stateDir, "state-dir", "", "state (overrides state_dir; *not* [a link])")
	sub := &cobra.Command{
		Use:   "status [--input FILE]",
		Short: "Show the health of the pools (or of a saved `zpool status` output)",
		Long: `Read zpool status -p -P and print each pool: state_dir and *stars*
stay as they are, # is not a heading, 1. is not a list.

Examples:
  zwatch status --input saved.txt \
      --json
  zwatch status`,
		Run: func(*cobra.Command, []string) {},
	}
	root.AddCommand(sub, &cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}})
	pages, err := CommandPages(root, testHeader, map[string][]Extra{"zwatch": {{Heading: "EXIT STATUS", Roff: ".TP\n.B 0\nSuccess.\n"}}}, []string{"zwatch.yaml(5)"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pages["zwatch-secret.1"]; ok {
		t.Error("a hidden command has a page")
	}
	for _, name := range []string{"zwatch.1", "zwatch-status.1", "zwatch-completion-bash.1"} {
		if _, ok := pages[name]; !ok {
			t.Errorf("no page %s among %v", name, keys(pages))
		}
	}
	if !strings.Contains(string(pages["zwatch.1"]), ".SH EXIT STATUS\n.TP\n.B 0\n") {
		t.Errorf("zwatch.1 lacks the extra section:\n%s", pages["zwatch.1"])
	}
	dir := t.TempDir()
	var paths []string
	for name, p := range pages {
		if !strings.Contains(string(p), `\fBzwatch.yaml(5)\fP`) {
			t.Errorf("%s: SEE ALSO does not name zwatch.yaml(5)", name)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, p, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	mantest.Check(t, paths...)
	out := render(t, filepath.Join(dir, "zwatch-status.1"))
	for _, want := range []string{
		"state_dir and *stars*", "# is not a heading, 1. is not a list.", "(or of a saved `zpool status` output)",
		"\n       zwatch status --input saved.txt \\\n           --json\n", // indented as in --help
		"overrides state_dir; *not* [a link]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered page lacks %q:\n%s", want, out)
		}
	}
}

// render formats a page as man shows it, in plain text.
func render(t *testing.T, page string) string {
	t.Helper()
	mantest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Not to a terminal, man prints plain text (no overstrike) MANWIDTH wide.
	cmd := exec.CommandContext(ctx, "/usr/bin/man", "-l", page)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "MANWIDTH=200")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("man -l %s: %v", page, err)
	}
	return out.String()
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
