package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/tools/simulate"
)

// decodeJSON decodes out into a map, failing the test when it is not one
// JSON object.
func decodeJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value:\n%s", out)
	}
	return m
}

// keysAre checks the exact key set of a JSON object: the shapes are
// documented and stable (docs/json.md), so a key is added on purpose only,
// and each is named in the docs.
func keysAre(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", what, got, want)
	}
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range want {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/json.md does not name %s's key `%s`", what, k)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	out, _, code := run(t, "version", "--json")
	if code != exitOK {
		t.Fatalf("code %d", code)
	}
	v := decodeJSON(t, out)
	if v["version"] != "dev" || v["go_version"] != runtime.Version() || v["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version %v", v)
	}
	for k := range v {
		if !slices.Contains([]string{"version", "commit", "commit_time", "modified", "build_date", "go_version", "platform"}, k) {
			t.Errorf("undocumented key %q", k)
		}
	}
	text, _, _ := run(t, "version")
	if !strings.HasPrefix(text, "zwatch dev") || !strings.Contains(text, runtime.Version()) {
		t.Errorf("text form %q", text)
	}
}

// The secrets of a config, written literally, through the environment and
// through a file, for check-config --json.
const (
	busPassword   = "bus-Literal-Secret-71"
	pushoverToken = "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
	pushoverUser  = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG"
	telegramToken = "123456789:AAE-env-Secret-telegram"
	smtpPassword  = "smtp-File-Secret-42"
	hookAuth      = "Bearer hook-Header-Secret-9"
)

func TestCheckConfigJSONNeverShowsASecret(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "smtp.password")
	if err := os.WriteFile(pwFile, []byte(smtpPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZW_TEST_TELEGRAM", telegramToken)
	hash, err := bcrypt.GenerateFromPassword([]byte("page-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "zwatch.yaml")
	text := fmt.Sprintf(`host: nas1
bus:
  password: %q
http:
  listen: 127.0.0.1:8931
  users:
    - name: admin
      password_hash: %q
notify:
  channels:
    - name: phone
      type: pushover
      token: %q
      user: %q
    - name: chat
      type: telegram
      token: "${ZW_TEST_TELEGRAM}"
      chat_ids: ["4242"]
    - name: mail
      type: email
      smtp: {host: smtp.example.com, port: 587, tls: starttls, username: nas@example.com, password: "file:%s"}
      from: nas@example.com
      to: [me@example.com]
    - name: hook
      type: webhook
      url: https://example.com/zwatch
      headers: {Authorization: %q}
`, busPassword, hash, pushoverToken, pushoverUser, pwFile, hookAuth)
	// Readable by others with literal secrets: a warning.
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "check-config", cfg, "--json")
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, secret := range []string{busPassword, string(hash), pushoverToken, pushoverUser, telegramToken, smtpPassword, hookAuth, "hook-Header-Secret"} {
		if strings.Contains(out+errOut, secret) {
			t.Errorf("check-config --json shows a secret %q:\n%s", secret, out)
		}
	}
	doc := decodeJSON(t, out)
	keysAre(t, "check-config", doc, "path", "valid", "warnings", "errors", "config")
	if doc["path"] != cfg || doc["valid"] != true || len(doc["errors"].([]any)) != 0 {
		t.Errorf("check-config: %v", doc)
	}
	if w := fmt.Sprint(doc["warnings"]); !strings.Contains(w, "readable") {
		t.Errorf("no warning about a world-readable file with secrets: %s", w)
	}
	if errOut != "" {
		t.Errorf("--json wrote to stderr: %q", errOut)
	}
	chans := doc["config"].(map[string]any)["notify"].(map[string]any)["channels"].([]any)
	phone, chat := chans[0].(map[string]any), chans[1].(map[string]any)
	if phone["token"] != "******" || phone["user"] != "******" || chat["token"] != "****** (from ${ZW_TEST_TELEGRAM})" {
		t.Errorf("masked channels: %v %v", phone, chat)
	}

	// The JSON config is the text form's, value for value.
	textOut, _, code := run(t, "check-config", cfg)
	if code != exitOK {
		t.Fatal(code)
	}
	var fromText map[string]any
	if err := yaml.Unmarshal([]byte(textOut), &fromText); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(doc["config"])
	if string(a) != string(b) {
		t.Errorf("--json config differs from the text form:\n%s\n%s", a, b)
	}
}

func TestCheckConfigJSONInvalid(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("zfs:\n  status_interval: soon\n"), 0o600)
	out, errOut, code := run(t, "check-config", bad, "--json")
	if code != exitUsage || !strings.Contains(errOut, `zfs.status_interval = "soon"`) {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	doc := decodeJSON(t, out)
	errs := doc["errors"].([]any)
	if doc["valid"] != false || doc["config"] != nil || len(errs) != 1 {
		t.Fatalf("invalid config: %v", doc)
	}
	e := errs[0].(map[string]any)
	keysAre(t, "check-config error", e, "key", "value", "problem")
	if e["key"] != "zfs.status_interval" || e["value"] != `"soon"` || !strings.Contains(e["problem"].(string), "duration") {
		t.Errorf("error %v", e)
	}
	out, _, code = run(t, "check-config", filepath.Join(t.TempDir(), "missing.yaml"), "--json")
	if doc := decodeJSON(t, out); code != exitUsage || !strings.Contains(fmt.Sprint(doc["errors"]), "does not exist") {
		t.Errorf("missing file: code %d, %s", code, out)
	}
}

// notify test --json against two real local endpoints: one accepts, one
// refuses with 401; the refusal carries the service's error and a fix, and
// the header secret shows nowhere.
func TestNotifyTestJSON(t *testing.T) {
	var got atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p map[string]any
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err == nil && r.Method == http.MethodPost {
			got.Add(1)
		}
	}))
	defer ok.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"bad token"}`, http.StatusUnauthorized)
	}))
	defer refuse.Close()
	cfg := writeConfig(t, fmt.Sprintf(`host: nas1
notify:
  console: false
  channels:
    - {name: good, type: webhook, url: %s}
    - {name: bad, type: webhook, url: %s, headers: {Authorization: %q}}
`, ok.URL, refuse.URL, hookAuth))
	out, errOut, code := run(t, "notify", "test", "-c", cfg, "--json")
	if code != exitFailure || !strings.Contains(errOut, "1 of 2 channels failed") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if strings.Contains(out+errOut, "hook-Header-Secret") {
		t.Errorf("a secret shows:\n%s%s", out, errOut)
	}
	doc := decodeJSON(t, out)
	keysAre(t, "notify test", doc, "channels", "delivered", "failed")
	if doc["delivered"] != 1.0 || doc["failed"] != 1.0 || got.Load() != 1 {
		t.Fatalf("notify test: %v (endpoint got %d)", doc, got.Load())
	}
	byName := map[string]map[string]any{}
	for _, c := range doc["channels"].([]any) {
		m := c.(map[string]any)
		byName[m["channel"].(string)] = m
	}
	good, bad := byName["good"], byName["bad"]
	keysAre(t, "notify test channel", good, "channel", "type", "delivered", "took_ms")
	keysAre(t, "notify test channel", bad, "channel", "type", "delivered", "took_ms", "error", "fix")
	if good["delivered"] != true || good["type"] != "webhook" || bad["delivered"] != false || !strings.Contains(bad["error"].(string), "401") || bad["fix"] == "" {
		t.Errorf("channels: %v", doc["channels"])
	}

	// No channel: an empty list, and the usage error.
	out, _, code = run(t, "notify", "test", "-c", writeConfig(t, "host: nas1\nnotify: {console: false}\n"), "--json")
	if doc := decodeJSON(t, out); code != exitUsage || len(doc["channels"].([]any)) != 0 {
		t.Errorf("no channels: code %d, %s", code, out)
	}
}

func TestSimulateListJSON(t *testing.T) {
	out, _, code := run(t, "simulate", "--list", "--json")
	if code != exitOK {
		t.Fatal(code)
	}
	doc := decodeJSON(t, out)
	keysAre(t, "simulate --list", doc, "scenarios")
	all, err := simulate.List()
	if err != nil {
		t.Fatal(err)
	}
	list := doc["scenarios"].([]any)
	if len(list) != len(all) || len(list) == 0 {
		t.Fatalf("%d scenarios, want %d", len(list), len(all))
	}
	for i, s := range list {
		m := s.(map[string]any)
		keysAre(t, "scenario", m, "name", "description", "origin", "steps")
		if m["name"] != all[i].Name || m["origin"] != all[i].Origin || int(m["steps"].(float64)) != len(all[i].Steps) {
			t.Errorf("scenario %d: %v", i, m)
		}
	}
	if !strings.Contains(out, "0 -> 8 -> 24") {
		t.Error("JSON escapes > as \\u003e")
	}
	if _, errOut, code := run(t, "simulate", "disk-replaced", "--json"); code != exitUsage || !strings.Contains(errOut, "--json goes with --list") {
		t.Errorf("simulate --json without --list: code %d, %q", code, errOut)
	}
}

func TestFleetHostsJSON(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, fmt.Sprintf("host: srv1\nstate_dir: %s\nbus:\n  listen: 127.0.0.1:4222\n", state))
	out, _, code := run(t, "fleet", "hosts", "-c", cfg, "--json")
	if doc := decodeJSON(t, out); code != exitOK || len(doc["agents"].([]any)) != 0 {
		t.Fatalf("no agents: code %d, %s", code, out)
	}
	if _, err := bus.AddAgent(state, "nas2", false, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	out, _, code = run(t, "fleet", "hosts", "-c", cfg, "--json")
	doc := decodeJSON(t, out)
	keysAre(t, "fleet hosts", doc, "agents")
	agents := doc["agents"].([]any)
	if code != exitOK || len(agents) != 1 {
		t.Fatalf("code %d, %s", code, out)
	}
	a := agents[0].(map[string]any)
	keysAre(t, "fleet host", a, "host", "user", "created")
	if a["host"] != "nas2" || a["user"] != "nas2" || a["created"] != "2026-03-01T12:00:00Z" || strings.Contains(out, "$2a$") {
		t.Errorf("agent %v", a)
	}
}

// replace --dry-run --json on a machine whose zpool (a stand-in replaying
// a real OpenZFS 2.3.2 output) shows healthy pools: the plan says nothing
// fails, and nothing else is read.
func TestReplaceDryRunJSONNothingFailing(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs(captured)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteScript(t, dir, "zpool", fmt.Sprintf(`#!/bin/sh
case "$*" in
"status -j"*) cat %q/a.zpool-status-j.json ;;
*) echo "stand-in: unexpected argv: $*" >&2; exit 2 ;;
esac
`, abs))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg := writeConfig(t, "host: nas1\n")
	out, errOut, code := run(t, "replace", "--dry-run", "--json", "-c", cfg)
	if code != exitOK {
		t.Fatalf("code %d: %s\n%s", code, errOut, out)
	}
	doc := decodeJSON(t, out)
	keysAre(t, "replace plan", doc, "pool", "failing", "old", "already_replacing", "min_size_bytes", "candidates", "new", "commands", "afterwards")
	if len(doc["failing"].([]any)) != 0 || doc["old"] != nil || len(doc["commands"].([]any)) != 0 {
		t.Errorf("plan %v", doc)
	}
	if _, errOut, code := run(t, "replace", "--json", "-c", cfg); code != exitUsage || !strings.Contains(errOut, "add --dry-run") {
		t.Errorf("--json without --dry-run: code %d, %q", code, errOut)
	}
}

// provision --json with a disk this machine does not have: the report
// says what failed and that nothing would run.
func TestProvisionJSON(t *testing.T) {
	out, _, code := run(t, "provision", "--json", "--pool", "vault", "--layout", "mirror", "zwatch-test-no-such-disk-1", "zwatch-test-no-such-disk-2")
	if code != exitFailure {
		t.Fatalf("code %d\n%s", code, out)
	}
	doc := decodeJSON(t, out)
	keysAre(t, "provision plan", doc, "pool", "exists", "ready", "disks", "checks", "layout", "steps",
		"already_provisioned", "differences", "layout_differs")
	if doc["pool"] != "vault" || doc["ready"] != false || len(doc["steps"].([]any)) != 0 || !strings.Contains(out, `"status": "FAIL"`) {
		t.Errorf("plan %s", out)
	}
	if _, errOut, code := run(t, "provision", "--json", "--apply", "--pool", "vault", "--layout", "mirror", "sdb", "sdc"); code != exitUsage || !strings.Contains(errOut, "changes nothing") {
		t.Errorf("--json --apply: code %d, %q", code, errOut)
	}
}

// provision bench --json with zpool and zfs stand-ins whose datasets are
// directories: the measurement itself (writes, fsync, reads) runs for real.
func TestProvisionBenchJSON(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("zwatch provision bench needs root")
	}
	dir, data := t.TempDir(), t.TempDir()
	testutil.WriteScript(t, dir, "zpool", `#!/bin/sh
case "$1" in
list) echo "$5" ;;
sync) ;;
*) echo "stand-in: unexpected argv: $*" >&2; exit 2 ;;
esac
`)
	testutil.WriteScript(t, dir, "zfs", fmt.Sprintf(`#!/bin/sh
d=%q
for last; do :; done
ds="$d/$(echo "$last" | tr / _)"
case "$1 $6" in
"create "*) mkdir "$ds" ;;
"get mountpoint") echo "$ds" ;;
"get encryption") echo off ;;
"get compressratio") echo 1.00x ;;
"destroy "*) rm -rf "$ds" ;;
*) echo "stand-in: unexpected argv: $*" >&2; exit 2 ;;
esac
`, data))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, errOut, code := run(t, "provision", "bench", "vault", "--size-mib", "1", "--json")
	if code != exitOK {
		t.Fatalf("code %d: %s\n%s", code, errOut, out)
	}
	doc := decodeJSON(t, out)
	keysAre(t, "provision bench", doc, "pool", "size_bytes", "network_mb_per_s", "results")
	results := doc["results"].([]any)
	if doc["pool"] != "vault" || doc["size_bytes"] != float64(1<<20) || doc["network_mb_per_s"] != 118.0 || len(results) != 8 {
		t.Fatalf("bench %v", doc)
	}
	r := results[0].(map[string]any)
	keysAre(t, "bench result", r, "compression", "encrypted", "data", "write_mb_per_s", "read_mb_per_s", "compress_ratio")
	if r["write_mb_per_s"].(float64) <= 0 || r["compress_ratio"] != 1.0 {
		t.Errorf("result %v", r)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("datasets left: %v", entries)
	}
}
