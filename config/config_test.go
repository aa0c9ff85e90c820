package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

func TestBadConfigsNameTheKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		// want: every substring must appear in the error.
		want []string
	}{
		{"unknown top key", "hots: nas1\n", []string{"hots: unknown key", `did you mean "host"`}},
		{"unknown nested key", "zfs:\n  status_intervall: 1m\n", []string{"zfs.status_intervall: unknown key", `did you mean "status_interval"`}},
		{"bad duration", "zfs:\n  status_interval: 10x\n", []string{`zfs.status_interval = "10x"`, "not a duration"}},
		{"number for duration", "smart:\n  interval: 5\n", []string{`smart.interval = "5"`, "not a duration"}},
		{"too short", "zfs:\n  list_interval: 10ms\n", []string{`zfs.list_interval = "10ms"`, "at least 1s"}},
		{"wrong type bool", "zfs:\n  enabled: maybe\n", []string{`zfs.enabled = "maybe"`, "true or false"}},
		{"wrong type int", "bus:\n  replicas: three\n", []string{`bus.replicas = "three"`, "whole number"}},
		{"impossible replicas", "bus:\n  replicas: 7\n", []string{`bus.replicas = "7"`, "1 to 5"}},
		{"mapping expected", "zfs: yes\n", []string{"zfs", "must be a mapping"}},
		{"list expected", "smart:\n  devices: /dev/sda\n", []string{"smart.devices", "must be a list"}},
		{"bad device", "smart:\n  devices:\n    - device: sda\n", []string{`smart.devices[0].device = "sda"`, "/dev/"}},
		{"unknown list item key", "smart:\n  devices:\n    - dev: /dev/sda\n", []string{"smart.devices[0].dev: unknown key"}},
		{"log level", "log:\n  level: loud\n", []string{`log.level = "loud"`, "debug, info, warn, error"}},
		{"listen with url", "bus:\n  url: nats://a:4222\n  listen: 127.0.0.1:4222\n", []string{"bus.listen", "cannot be used with bus.url"}},
		{"listen beyond loopback without TLS", "bus:\n  listen: 0.0.0.0:4222\n", []string{`bus.listen = "0.0.0.0:4222"`, "needs TLS", "bus.listen_tls.cert", "bus.listen_tls.key", "127.0.0.1"}},
		{"listen on all addresses without TLS", "bus:\n  listen: :4222\n", []string{`bus.listen = ":4222"`, "needs TLS"}},
		{"listen by name without TLS", "bus:\n  listen: nas.example.net:4222\n", []string{"needs TLS"}},
		{"listen without port", "bus:\n  listen: 127.0.0.1\n", []string{`bus.listen = "127.0.0.1"`, "host:port"}},
		{"listen tls half", "bus:\n  listen: 127.0.0.1:4222\n  listen_tls:\n    cert: /etc/hosts\n", []string{"bus.listen_tls", "cert and key go together"}},
		{"listen tls without listen", "bus:\n  listen_tls:\n    cert: /etc/hosts\n    key: /etc/hosts\n", []string{"bus.listen_tls", "without bus.listen"}},
		{"listen tls file missing", "bus:\n  listen: 0.0.0.0:4222\n  listen_tls:\n    cert: /nonexistent/c.pem\n    key: /nonexistent/k.pem\n", []string{"bus.listen_tls.cert", "cannot be read"}},
		{"url scheme", "bus:\n  url: natshost\n", []string{`bus.url = "natshost"`, "nats://"}},
		{"tls half", "bus:\n  tls:\n    cert: /etc/hosts\n", []string{"bus.tls", "cert and key go together"}},
		{"missing env secret", "bus:\n  password: ${ZWATCH_TEST_UNSET_VAR}\n", []string{"bus.password", "ZWATCH_TEST_UNSET_VAR is not set"}},
		{"missing secret file", "bus:\n  password: file:/nonexistent/secret\n", []string{"bus.password", "/nonexistent/secret cannot be read"}},
		{"heartbeat url", "heartbeat:\n  url: hc-ping.com/x\n", []string{`heartbeat.url = "hc-ping.com/x"`, "http://"}},
		{"rules group wait", "rules:\n  group_wait: 1h\n", []string{`rules.group_wait = "1h"`, "between 0s and 10m"}},
		{"not yaml", "zfs: [\n", []string{"not valid YAML"}},
		{"memory limit too small", "memory:\n  limit_mb: 8\n", []string{`memory.limit_mb = "8"`, "0 (no limit) or 32 to"}},
		{"memory settle too soon", "memory:\n  settle_after: 5s\n", []string{`memory.settle_after = "5s"`, "0 (off) or 30s to 24h"}},
		{"pprof beyond loopback", "http:\n  listen: 0.0.0.0:8931\n  insecure: true\n  pprof: true\n", []string{"http.pprof", "loopback"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.yaml), testCatalog)
			if err == nil {
				t.Fatalf("config accepted:\n%s", c.yaml)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

func TestErrorsAreAllReported(t *testing.T) {
	_, err := Parse(strings.NewReader("hots: a\nzfs:\n  zpol: x\n"), testCatalog)
	if err == nil || !strings.Contains(err.Error(), "hots") || !strings.Contains(err.Error(), "zfs.zpol") {
		t.Fatalf("want both errors, got %v", err)
	}
}

func TestDefaultsAndOverrides(t *testing.T) {
	l, err := Parse(strings.NewReader("host: nas1\nzfs:\n  status_interval: 2m\nrules:\n  repeat_warning: 7d\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Config
	if c.Host != "nas1" || c.ZFS.StatusInterval.D() != 2*time.Minute || c.ZFS.ListInterval.D() != 10*time.Second {
		t.Fatalf("unexpected %+v", c.ZFS)
	}
	if c.Rules.RepeatWarning.D() != 7*24*time.Hour {
		t.Fatalf("7d parsed as %v", c.Rules.RepeatWarning.D())
	}
	if !c.ZFS.Enabled || !c.ZFS.FollowEvents || c.StateDir != "/var/lib/zwatch" {
		t.Fatal("defaults lost")
	}
}

func TestEmptyFileIsDefaults(t *testing.T) {
	if _, err := Parse(strings.NewReader("# nothing\n"), testCatalog); err != nil {
		t.Fatal(err)
	}
}

func TestSecretsFromEnvAndFileAreMasked(t *testing.T) {
	t.Setenv("ZWATCH_TEST_PW", "hunter2")
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte("s3cret\n"), 0o600)
	l, err := Parse(strings.NewReader("bus:\n  url: nats://x:4222\n  user: u\n  password: ${ZWATCH_TEST_PW}\n"), testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if l.Config.Bus.Password.Value != "hunter2" || l.Config.Bus.Password.Literal {
		t.Fatalf("env secret = %+v", l.Config.Bus.Password)
	}
	out, _ := l.Config.Masked()
	if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "from ${ZWATCH_TEST_PW}") {
		t.Fatalf("secret not masked:\n%s", out)
	}
	l, err = Parse(strings.NewReader("bus:\n  url: nats://x:4222\n  password: file:"+pwFile+"\n"), testCatalog)
	if err != nil || l.Config.Bus.Password.Value != "s3cret" {
		t.Fatalf("file secret: %v %+v", err, l.Config.Bus.Password)
	}
}

func TestWorldReadableLiteralSecretWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zwatch.yaml")
	os.WriteFile(path, []byte("bus:\n  url: nats://x:4222\n  password: plain\n"), 0o644)
	l, err := Load(path, testCatalog)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "chmod 600") {
		t.Fatalf("warnings = %v", l.Warnings)
	}
	os.Chmod(path, 0o600)
	if l, _ = Load(path, testCatalog); len(l.Warnings) != 0 {
		t.Fatalf("warned on 0600: %v", l.Warnings)
	}
}

func TestMissingFile(t *testing.T) {
	_, err := Load("/nonexistent/zwatch.yaml", testCatalog)
	if err == nil || !strings.Contains(err.Error(), "zwatch.example.yaml") {
		t.Fatalf("got %v", err)
	}
}

func TestBoundedReads(t *testing.T) {
	if _, err := Parse(io.LimitReader(testutil.Zeros{}, maxConfigSize+10), testCatalog); err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
		t.Errorf("huge config: %v", err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, maxSecretFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{big: "larger than 64 KiB", dir: "not a regular file", "/dev/null": "not a regular file"} {
		_, err := Parse(strings.NewReader("bus:\n  url: nats://x:4222\n  password: file:"+file+"\n"), testCatalog)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("secret file %s: %v, want %q", file, err, want)
		}
	}
}
