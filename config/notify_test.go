package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fakeChannel is a channel type written against ChannelType directly, as
// config sees every type the catalogue hands it.
type fakeChannel struct {
	name string
	keys []string
}

type fakeSettings struct {
	Address string `yaml:"address"`
	Key     Secret `yaml:"key"`
	Level   int    `yaml:"level"`
}

func (f fakeChannel) Name() string   { return f.name }
func (f fakeChannel) Keys() []string { return f.keys }

func (f fakeChannel) Decode(n *yaml.Node, path string, errs *Errors) ChannelSettings {
	var s fakeSettings
	if !DecodeChannelSettings(n, path, &s, errs) {
		return nil
	}
	return s
}

func (s fakeSettings) Validate(p string, errs *Errors) {
	if s.Address == "" {
		errs.Add(p+".address", nil, "empty: set the address")
	}
}

func (s fakeSettings) HasLiteralSecret() bool { return s.Key.Literal }

var notifyCatalog = Catalog{Channels: []ChannelType{
	fakeChannel{name: "pigeon", keys: []string{"address", "key", "level"}},
	fakeChannel{name: "drum", keys: []string{"address", "level"}},
}}

func parseNotify(t *testing.T, channels string) (*Loaded, error) {
	t.Helper()
	return Parse(strings.NewReader("host: nas1\nnotify:\n  channels:\n"+channels), notifyCatalog)
}

func TestChannelSettingsDecodedByType(t *testing.T) {
	t.Setenv("ZW_PIGEON_KEY", "k3y")
	l, err := parseNotify(t, "    - {name: p, type: pigeon, address: loft 3, key: \"${ZW_PIGEON_KEY}\", level: 2, min_severity: info}\n")
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config.Notify.Channels[0]
	s, ok := c.Settings.(fakeSettings)
	if !ok || s.Address != "loft 3" || s.Key.Value != "k3y" || s.Level != 2 || c.Severity() != "info" {
		t.Fatalf("channel %+v settings %+v", c, c.Settings)
	}
	out, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	want := "    - name: p\n      type: pigeon\n      min_severity: info\n      send_resolved: null\n      route:\n        pools: []\n        alerts: []\n" +
		"      address: loft 3\n      key: '****** (from ${ZW_PIGEON_KEY})'\n      level: 2\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("Masked() lacks\n%s\nin\n%s", want, out)
	}
}

func TestChannelKeyProblems(t *testing.T) {
	cases := []struct{ channels, want string }{
		{"    - {name: p, type: pigeon, adress: x}\n", `notify.channels[0].adress: unknown key (line 4): did you mean "address"?; valid keys here: address, key, level, min_severity, name, quiet, route, send_resolved, type`},
		{"    - {name: d, type: drum, address: x, key: k}\n", "notify.channels[0].key: not used by type drum (its keys: address, level)"},
		{"    - {name: d, type: drum, address: x, level: loud}\n", `notify.channels[0].level = "loud": must be a whole number`},
		{"    - {name: d, type: drum, address: x, key: \"${ZW_UNSET_DRUM_KEY}\"}\n", `notify.channels[0].key = "${ZW_UNSET_DRUM_KEY}": environment variable ZW_UNSET_DRUM_KEY is not set`},
		{"    - {name: d, type: drum}\n", "notify.channels[0].address: empty: set the address"},
		{"    - {name: d, type: flute}\n", `notify.channels[0].type = "flute": must be one of pigeon, drum`},
		{"    - {name: d, type: drum, address: x, route: {alerts: x}}\n", `notify.channels[0].route.alerts = "x": must be a list`},
		{"    - [a, b]\n", "notify.channels[0]: must be a mapping (key: value lines), not a list (- item lines); valid keys here: address, key"},
	}
	for _, tc := range cases {
		_, err := parseNotify(t, tc.channels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s  got  %v\n  want %q", tc.channels, err, tc.want)
		}
	}
	// A channel's key problem is found with the rest of the file's.
	_, err := Parse(strings.NewReader("hots: nas1\nnotify:\n  channels:\n    - {name: p, type: pigeon, adress: x}\n"), notifyCatalog)
	if err == nil || !strings.Contains(err.Error(), "hots: unknown key") || !strings.Contains(err.Error(), "notify.channels[0].adress") {
		t.Errorf("got %v", err)
	}
	// Aliases are followed, as yamlcheck does.
	_, err = Parse(strings.NewReader("host: nas1\nx: &ch {name: p, type: pigeon, adress: x}\nnotify:\n  channels: [*ch]\n"), notifyCatalog)
	if err == nil || !strings.Contains(err.Error(), "notify.channels[0].adress") {
		t.Errorf("alias: %v", err)
	}
}

func TestChannelLiteralSecretWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zwatch.yaml")
	os.WriteFile(path, []byte("host: nas1\nnotify:\n  channels:\n    - {name: p, type: pigeon, address: a, key: plain}\n"), 0o644)
	l, err := Load(path, notifyCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "chmod 600") {
		t.Fatalf("warnings = %v", l.Warnings)
	}
}
