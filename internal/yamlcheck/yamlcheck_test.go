package yamlcheck

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type channel struct {
	Name    string            `yaml:"name"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
}

type doc struct {
	Host   string `yaml:"host"`
	Notify struct {
		Channels []channel `yaml:"channels"`
		Retries  int       `yaml:"retries"`
		Enabled  *bool     `yaml:"enabled"`
	} `yaml:"notify"`
	Level  level `yaml:"level"`
	hidden string
	Skip   string `yaml:"-"`
}

// level decodes itself, as config.Duration does.
type level int

func (l *level) UnmarshalYAML(n *yaml.Node) error {
	if n.Value != "low" && n.Value != "high" {
		return errors.New("yaml: want low or high")
	}
	return nil
}

func check(t *testing.T, src string, opts Options) []Problem {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	return Check(&root, reflect.TypeFor[doc](), opts)
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       Problem // the fields set are compared
		message    string  // must appear in Message
	}{
		{"unknown key with suggestion", "hots: a\n",
			Problem{Kind: UnknownKey, Path: "hots", Line: 1, Key: "hots"},
			`unknown key (line 1): did you mean "host"?; valid keys here: host, level, notify`},
		{"unknown key far from any", "colour: red\n",
			Problem{Kind: UnknownKey, Path: "colour", Key: "colour"},
			"unknown key (line 1); valid keys here: host, level, notify"},
		{"wrong scalar type", "notify:\n  retries: three\n",
			Problem{Kind: BadValue, Path: "notify.retries", Line: 2, Value: "three"},
			"must be a whole number"},
		{"wrong scalar type behind a pointer", "notify:\n  enabled: maybe\n",
			Problem{Kind: BadValue, Path: "notify.enabled", Value: "maybe"},
			"must be true or false"},
		{"list where mapping expected", "notify:\n  - channels\n",
			Problem{Kind: WrongKind, Path: "notify", Want: "a mapping (key: value lines)", Found: "a list (- item lines)"},
			"must be a mapping (key: value lines), not a list (- item lines); valid keys here: channels, enabled, retries"},
		{"single value where list expected", "notify:\n  channels: x\n",
			Problem{Kind: WrongKind, Path: "notify.channels", Value: "x", Found: "a single value"},
			"must be a list (- item lines), not a single value"},
		{"mapping where single value expected", "host: {a: b}\n",
			Problem{Kind: WrongKind, Path: "host", Want: "a string"},
			"must be a string, not a mapping (key: value lines)"},
		{"nested path", "notify:\n  channels:\n    - name: a\n    - name: b\n      url: [x]\n",
			Problem{Kind: WrongKind, Path: "notify.channels[1].url", Line: 5},
			"must be a string"},
		{"nested unknown key", "notify:\n  channels:\n    - name: a\n    - nme: b\n",
			Problem{Kind: UnknownKey, Path: "notify.channels[1].nme", Key: "nme"},
			`did you mean "name"?`},
		{"free-form map value", "notify:\n  channels:\n    - headers: {X-A: [1]}\n",
			Problem{Kind: WrongKind, Path: "notify.channels[0].headers.X-A"},
			"must be a string"},
		{"own unmarshaler", "level: medium\n",
			Problem{Kind: BadValue, Path: "level", Value: "medium"},
			"want low or high"},
		{"duplicate key", "host: a\nhost: b\n",
			Problem{Kind: DuplicateKey, Path: "host", Line: 2, Key: "host"},
			"given twice (lines 1 and 2)"},
		{"unexported and skipped fields are unknown", "skip: x\n",
			Problem{Kind: UnknownKey, Path: "skip"},
			"unknown key"},
		{"document not a mapping", "- a\n",
			Problem{Kind: WrongKind, Path: ""},
			"must be a mapping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := check(t, c.yaml, Options{})
			if len(ps) != 1 {
				t.Fatalf("want one problem, got %+v", ps)
			}
			if !matches(ps[0], c.want) || !strings.Contains(ps[0].Message, c.message) {
				t.Errorf("got  %+v\nwant %+v with message %q", ps[0], c.want, c.message)
			}
		})
	}
}

// matches compares the fields want sets.
func matches(got, want Problem) bool {
	return got.Kind == want.Kind && got.Path == want.Path &&
		(want.Line == 0 || got.Line == want.Line) &&
		(want.Key == "" || got.Key == want.Key) &&
		(want.Value == "" || got.Value == want.Value) &&
		(want.Want == "" || got.Want == want.Want) &&
		(want.Found == "" || got.Found == want.Found)
}

func TestCheckAcceptsWhatDecodes(t *testing.T) {
	src := "host: a\nnotify:\n  retries:\n  enabled: true\n  channels:\n    - {name: a, url: 'https://x', headers: {X-A: b}}\nlevel: low\n"
	if ps := check(t, src, Options{}); len(ps) != 0 {
		t.Fatalf("problems in a good document: %+v", ps)
	}
	if ps := check(t, "# nothing\n", Options{}); len(ps) != 0 {
		t.Fatalf("problems in an empty document: %+v", ps)
	}
}

func TestCheckReportsAllInOrder(t *testing.T) {
	ps := check(t, "hots: a\nnotify:\n  retries: x\n  channels: [{nme: a}]\n", Options{})
	var paths []string
	for _, p := range ps {
		paths = append(paths, p.Path)
	}
	if got := strings.Join(paths, " "); got != "hots notify.retries notify.channels[0].nme" {
		t.Fatalf("paths %q", got)
	}
}

func TestAliases(t *testing.T) {
	src := "notify:\n  channels:\n    - &c {name: a, url: [x]}\n    - *c\n"
	// Followed: the problem inside the anchor is reported once, where it is written.
	ps := check(t, src, Options{})
	if len(ps) != 1 || ps[0].Path != "notify.channels[0].url" {
		t.Fatalf("followed alias: %+v", ps)
	}
	ps = check(t, "host: &h a\nnotify:\n  channels: [{name: *h}]\n", Options{NoAliases: true})
	if len(ps) != 1 || ps[0].Kind != Alias || ps[0].Path != "notify.channels[0].name" || !strings.Contains(ps[0].Message, "*h") {
		t.Fatalf("refused alias: %+v", ps)
	}
}

// TestAliasBomb: an alias target is checked once per type, not once per
// use, so aliases of aliases (2^40 uses here) cost nothing.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x]\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &root); err != nil {
		t.Fatal(err)
	}
	type tree []tree
	ps := Check(&root, reflect.TypeFor[map[string]tree](), Options{})
	if len(ps) != 1 || ps[0].Path != "a0[0]" {
		t.Fatalf("%+v", ps)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"PoolCapacity", "host", "status_interval"}
	for word, want := range map[string]string{
		"hots":                   "host",
		"Host":                   "host",
		"poolcapacty":            "PoolCapacity",
		"status_intervall":       "status_interval",
		"colour":                 "",
		strings.Repeat("h", 100): "",
	} {
		if got := Closest(word, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Suggest("hots", known); got != `: did you mean "host"?` {
		t.Errorf("Suggest = %q", got)
	}
	if got := Suggest("colour", known); got != "" {
		t.Errorf("Suggest = %q", got)
	}
}
