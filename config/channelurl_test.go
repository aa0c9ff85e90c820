package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// urlPigeon is a channel type that can be written as a URL,
// pigeon://KEY@address: what a ChannelURLType does, seen from config.
type urlPigeon struct{ fakeChannel }

func (urlPigeon) Schemes() []string { return []string{"pigeon", "pigeon+loft"} }

func (urlPigeon) DecodeURL(u Secret, path string, errs *Errors) (ChannelSettings, string) {
	rest := strings.TrimPrefix(strings.TrimPrefix(u.Value, "pigeon+loft://"), "pigeon://")
	key, address, ok := strings.Cut(rest, "@")
	if !ok {
		errs.Add(path, "pigeon://…", "user: no key: write pigeon://KEY@address")
		return nil, ""
	}
	return fakeSettings{Address: address, Key: u.Part(key), Level: 1}, "pigeon://***@" + address
}

var urlCatalog = Catalog{Channels: []ChannelType{
	urlPigeon{fakeChannel{name: "pigeon", keys: []string{"address", "key", "level"}}},
	fakeChannel{name: "drum", keys: []string{"address", "level"}},
}}

func parseURLChannels(t *testing.T, channels string) (*Loaded, error) {
	t.Helper()
	return Parse(strings.NewReader("host: nas1\nnotify:\n  channels:\n"+channels), urlCatalog)
}

func TestChannelWrittenAsURL(t *testing.T) {
	t.Setenv("ZW_PIGEON_URL", "pigeon://k3y@loft 9")
	l, err := parseURLChannels(t, `    - {url: "pigeon://s3cret@loft 3", min_severity: critical, route: {pools: [vault]}}
    - {name: pigeon, type: pigeon, address: loft 1}
    - url: "${ZW_PIGEON_URL}"
    - {url: "pigeon+loft://k@loft 4", name: birds}
`)
	if err != nil {
		t.Fatal(err)
	}
	chs := l.Config.Notify.Channels
	s, _ := chs[0].Settings.(fakeSettings)
	if chs[0].Type != "pigeon" || chs[0].Severity() != "critical" || s.Address != "loft 3" || s.Key.Value != "s3cret" || !s.Key.Literal {
		t.Errorf("channel %+v settings %+v", chs[0], chs[0].Settings)
	}
	// Named after the scheme, clear of the names given; a given name stays.
	var names []string
	for _, c := range chs {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "pigeon-2 pigeon pigeon-3 birds" {
		t.Errorf("names %v", names)
	}
	out, err := l.Config.Masked()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"    - name: pigeon-2\n      type: pigeon # from url: pigeon://***@loft 3\n      min_severity: critical\n",
		"      address: loft 3\n      key: '******'\n",
		"    - name: pigeon-3\n      type: pigeon # from url: pigeon://***@loft 9\n",
		"      key: '****** (from ${ZW_PIGEON_URL})'\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("Masked() lacks\n%s\nin\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "k3y") {
		t.Errorf("Masked() shows a secret:\n%s", out)
	}
	// What check-config prints reads back as the same channels.
	again, err := Parse(strings.NewReader(strings.ReplaceAll(string(out), "'******'", "x")), urlCatalog)
	if err != nil || again.Config.Notify.Channels[0].Type != "pigeon" || again.Config.Notify.Channels[0].Name != "pigeon-2" {
		t.Errorf("printed config does not read back: %v", err)
	}
}

func TestChannelURLProblems(t *testing.T) {
	cases := []struct{ channels, want string }{
		{"    - {url: \"pigeon:/x\"}\n", "notify.channels[0].url: scheme: missing: a channel URL starts with its service and ://, one of pigeon, pigeon+loft"},
		{"    - {url: \"pidgeon://k@x\"}\n", `notify.channels[0].url = "pidgeon://…": scheme: "pidgeon" is not a service zwatch knows: did you mean "pigeon"?`},
		{"    - {url: \"drum://x\"}\n", `notify.channels[0].url = "drum://…": scheme: drum channels have no URL form: write the channel with type: drum and its keys`},
		{"    - {url: \"pigeon://x\"}\n", `notify.channels[0].url = "pigeon://…": user: no key`},
		{"    - {url: \"pigeon://k@\"}\n", "notify.channels[0].url = \"pigeon://***@\": decodes to address: empty: set the address"},
		{"    - {url: \"pigeon://k@x\", level: 2}\n", "notify.channels[0].level: not used beside url: a channel written as a URL takes only name, min_severity, send_resolved, route, quiet beside it"},
		{"    - {url: \"pigeon://k@x\", adress: y}\n", `notify.channels[0].adress: unknown key (line 4): did you mean "address"?`},
		{"    - {url: \"${ZW_UNSET_PIGEON_URL}\"}\n", `notify.channels[0].url = "${ZW_UNSET_PIGEON_URL}": environment variable ZW_UNSET_PIGEON_URL is not set`},
		{"    - {url: \"\"}\n", "notify.channels[0].url: empty: write the channel as one URL"},
		{"    - {url: \"pigeon://k@x\", name: console}\n", `notify.channels[0].name = "console": reserved`},
		{"    - {name: d}\n", "notify.channels[0].type: empty: set one of pigeon, drum, or write the channel as one url:"},
		// With a type, url is the type's own key (here: not one of drum's).
		{"    - {name: d, type: drum, address: a, url: \"pigeon://k@x\"}\n", "notify.channels[0].url: unknown key"},
	}
	for _, tc := range cases {
		_, err := parseURLChannels(t, tc.channels)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s  got  %v\n  want %q", tc.channels, err, tc.want)
		}
	}
	// A catalogue without URL forms says nothing of URLs.
	if _, err := parseNotify(t, "    - {name: d}\n"); err == nil || !strings.Contains(err.Error(), `notify.channels[0].type = "": must be one of pigeon, drum`) {
		t.Errorf("no URL forms: %v", err)
	}
}

func TestChannelURLLiteralSecretWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zwatch.yaml")
	os.WriteFile(path, []byte("host: nas1\nnotify:\n  channels:\n    - url: \"pigeon://plain@loft\"\n"), 0o644)
	l, err := Load(path, urlCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "chmod 600") {
		t.Fatalf("warnings = %v", l.Warnings)
	}
	t.Setenv("ZW_PIGEON_URL2", "pigeon://k@loft")
	os.WriteFile(path, []byte("host: nas1\nnotify:\n  channels:\n    - url: \"${ZW_PIGEON_URL2}\"\n"), 0o644)
	if l, err = Load(path, urlCatalog); err != nil || len(l.Warnings) != 0 {
		t.Fatalf("from the environment: %v %v", err, l.Warnings)
	}
}
