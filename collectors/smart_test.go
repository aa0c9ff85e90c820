package collectors

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/smart"
)

// Outputs captured on the zwatch dev VM (Firecracker, kernel 6.18.44) with
// smartctl 7.3 r5338 (Debian smartmontools 7.3-1+b1), 2026-11-30, verbatim.
const (
	// `su nobody -c "smartctl --json=c -a -n standby -d sat /dev/vda"`, exit 2
	capturedDenied = `{"json_format_version":[1,0],"smartctl":{"version":[7,3],"svn_revision":"5338","platform_info":"x86_64-linux-6.18.44-fc-v669","build_info":"(local build)","argv":["smartctl","--json=c","-a","-n","standby","-d","sat","/dev/vda"],"messages":[{"string":"Smartctl open device: /dev/vda [SAT] failed: Permission denied","severity":"error"}],"exit_status":2},"local_time":{"time_t":1796050808,"asctime":"Mon Nov 30 15:00:08 2026 UTC"}}`
	// `smartctl --json=c -a -n standby -d sat /dev/sdz` (no such disk), exit 2
	capturedVanished = `{"json_format_version":[1,0],"smartctl":{"version":[7,3],"svn_revision":"5338","platform_info":"x86_64-linux-6.18.44-fc-v669","build_info":"(local build)","argv":["smartctl","--json=c","-a","-n","standby","-d","sat","/dev/sdz"],"messages":[{"string":"Smartctl open device: /dev/sdz [SAT] failed: No such device","severity":"error"}],"exit_status":2},"local_time":{"time_t":1796050808,"asctime":"Mon Nov 30 15:00:08 2026 UTC"}}`
	// `smartctl --json=c -a -n standby,q /dev/null`: smartd's ",q" is not
	// valid for smartctl, exit 1
	capturedBadNArg = `{"json_format_version":[1,0],"smartctl":{"version":[7,3],"svn_revision":"5338","platform_info":"x86_64-linux-6.18.44-fc-v669","build_info":"(local build)","argv":["smartctl","--json=c","-a","-n","standby,q","/dev/null"],"messages":[{"string":"=======> INVALID ARGUMENT TO -n: standby,q","severity":"error"},{"string":"=======> VALID ARGUMENTS ARE: never, sleep[,STATUS[,STATUS2]], standby[,STATUS[,STATUS2]], idle[,STATUS[,STATUS2]] <=======","severity":"error"}],"exit_status":1}}`
)

// constructedStandby is NOT a capture: no real JSON of a disk in standby was
// available. It is capturedVanished's real 7.3 envelope with the message
// smartmontools prints for -n standby (ataprint.cpp: "Device is in %s mode,
// exit(%d)"), exit 2.
var constructedStandby = strings.Replace(capturedVanished,
	`"Smartctl open device: /dev/sdz [SAT] failed: No such device","severity":"error"`,
	`"Device is in STANDBY mode, exit(2)","severity":"information"`, 1)

// reports are the SMART reports published, by their extra subject tokens.
func (p *memPublisher) reports() map[string]*smart.Report {
	out := map[string]*smart.Report{}
	for _, m := range p.msgs {
		if r, ok := m.data.(smart.Report); ok && m.kind == facts.Smart.Name() {
			out[strings.Join(m.extra, ".")] = &r
		}
	}
	return out
}

// errors are the collector errors published, by target.
func (p *memPublisher) errors() map[string]facts.CollectorErrorData {
	out := map[string]facts.CollectorErrorData{}
	for _, m := range p.msgs {
		if ce, ok := m.data.(facts.CollectorErrorData); ok && m.kind == facts.CollectorError.Name() {
			out[ce.Target] = ce
		}
	}
	return out
}

// standIn installs a fake smartctl first on PATH. Each device gets a
// recorded output and exit code, or a hang; the fake logs its argv.
type standIn struct {
	t   *testing.T
	dir string
}

func newStandIn(t *testing.T) *standIn {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
# stand-in smartctl: replays recorded outputs with their exit codes
echo "$*" >> "` + dir + `/argv.log"
dev=""
for a in "$@"; do dev="$a"; done
case "$*" in *--scan-open*) dev=scan ;; esac
key=$(echo "$dev" | tr '/' '_')
if [ -f "` + dir + `/$key.sleep" ]; then sleep "$(cat "` + dir + `/$key.sleep")"; fi
cat "` + dir + `/$key.out" 2>/dev/null
exit "$(cat "` + dir + `/$key.rc" 2>/dev/null || echo 1)"
`
	testutil.WriteScript(t, dir, "smartctl", script)
	testutil.PrependPath(t, dir)
	return &standIn{t: t, dir: dir}
}

func (s *standIn) key(dev string) string {
	return filepath.Join(s.dir, strings.ReplaceAll(dev, "/", "_"))
}

// replay makes the fake answer dev with output and exit code rc.
func (s *standIn) replay(dev, output string, rc int) {
	s.t.Helper()
	if err := os.WriteFile(s.key(dev)+".out", []byte(output), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(s.key(dev)+".rc", []byte(fmt.Sprint(rc)), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *standIn) replayFixture(dev, fixture string, rc int) {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/smartctl", fixture))
	if err != nil {
		s.t.Fatal(err)
	}
	s.replay(dev, string(b), rc)
}

func (s *standIn) hang(dev string) {
	if err := os.WriteFile(s.key(dev)+".sleep", []byte("30"), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *standIn) argv() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "argv.log"))
	return string(b)
}

func TestSmartCollectorEndToEnd(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("/dev/sda", "sata-hdd-wd140edfz-healthy.json", 0)
	s.replayFixture("/dev/sdb", "usb-jmicron-hitachi-hdd-failing-realloc-now.json", 216) // its real exit status
	s.hang("/dev/sdc")
	s.replay("/dev/sdd", capturedDenied, 2)
	s.replayFixture("/dev/sde", "usb-unknown-bridge-75-exit1.json", 1)
	s.replay("/dev/sdf", capturedVanished, 2)
	full, err := os.ReadFile("../testdata/smartctl/nvme-intel-660p-healthy.json")
	if err != nil {
		t.Fatal(err)
	}
	s.replay("/dev/sdg", string(full[:len(full)/2]), 0) // cut off mid-document
	s.replayFixture("/dev/vda", "sata-ssd-wd-red-sa500-4tb-no-thresh.json", 0)

	cfg := SmartConfig{Timeout: time.Second, Devices: []SmartDevice{
		{Device: "/dev/sda"}, {Device: "/dev/sdb", Type: "usbjmicron"}, {Device: "/dev/sdc"}, {Device: "/dev/sdd", Type: "sat"},
		{Device: "/dev/sde"}, {Device: "/dev/sdf", Type: "sat"}, {Device: "/dev/sdg"}, {Device: "/dev/vda", Type: "sat"},
	}}
	c := NewSmartCollector(cfg, execx.New(time.Second))
	c.Root = "../testdata/sysfs/firecracker-virtio-vda" // real sysfs capture: vda
	pub := &memPublisher{}
	start := time.Now()
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Collect took %s: the hang was waited on", d)
	}

	reps := pub.reports()
	if r := reps["9RK1XXXX"]; r == nil || r.SmartPassed == nil || !*r.SmartPassed || r.Model != "WDC WD140EDFZ-11A0VA0" {
		t.Errorf("sda report = %+v", r)
	}
	// A failing disk is a reading to publish, not an error.
	if r := reps["MSK423Y20S3HBC"]; r == nil || r.SmartPassed == nil || *r.SmartPassed || r.ExitStatus.Code != 216 || r.Transport != "usb" {
		t.Errorf("sdb report = %+v", r)
	}
	// vda: the kernel name comes from the captured sysfs tree, the rest
	// from the replayed output (whose own device name is /dev/sdc).
	if r := reps["REDACTED"]; r == nil || r.Kernel != "vda" || r.Model != "WDC  WDS400T1R0A-68A4W0" {
		t.Errorf("vda report = %+v", r)
	}
	if len(reps) != 3 {
		t.Errorf("got %d reports, want 3: %v", len(reps), keys(reps))
	}

	errs := pub.errors()
	wantErr := map[string]struct{ kind, fix string }{
		"/dev/sdc": {execx.KindTimeout, "dmesg"},
		"/dev/sdd": {execx.KindDenied, "CAP_SYS_RAWIO"},
		"/dev/sde": {execx.KindFailed, "devices: [{device: /dev/sde, type: sat}]"},
		"/dev/sdf": {execx.KindFailed, "dmesg"},
		"/dev/sdg": {facts.KindParse, "report it"},
	}
	for dev, w := range wantErr {
		ce, ok := errs[dev]
		if !ok {
			t.Errorf("%s: no collector.error", dev)
			continue
		}
		if ce.Kind != w.kind || !strings.Contains(ce.Fix, w.fix) || ce.Collector != SmartCollectorName {
			t.Errorf("%s: error %+v, want kind %s, fix containing %q", dev, ce, w.kind, w.fix)
		}
	}
	if !strings.Contains(errs["/dev/sdf"].Message, "vanished") {
		t.Errorf("sdf message = %q", errs["/dev/sdf"].Message)
	}
	if len(errs) != len(wantErr) {
		t.Errorf("got %d errors, want %d: %+v", len(errs), len(wantErr), errs)
	}
	if got := s.argv(); !strings.Contains(got, "--json=c -a -n standby -d usbjmicron /dev/sdb") || strings.Contains(got, "standby,q") {
		t.Errorf("argv log:\n%s", got)
	}
}

func TestSmartCollectorStandby(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("/dev/sdh", "sata-hdd-wd140edfz-healthy.json", 0)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	c := NewSmartCollector(SmartConfig{Timeout: time.Second, Devices: []SmartDevice{{Device: "/dev/sdh", Type: "sat"}}}, nil)
	c.Root = t.TempDir()
	c.Now = func() time.Time { return now }

	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	s.replay("/dev/sdh", constructedStandby, 2)
	now = now.Add(25 * time.Minute)
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 2 {
		t.Fatalf("got %d messages, want 2: %+v", len(pub.msgs), pub.msgs)
	}
	sb, ok := pub.msgs[1].data.(smart.Report)
	if !ok || pub.msgs[1].kind != facts.Smart.Name() || strings.Join(pub.msgs[1].extra, ".") != "9RK1XXXX" {
		t.Fatalf("standby message = %+v", pub.msgs[1])
	}
	if !sb.InStandby || sb.LastReadingAgeS == nil || *sb.LastReadingAgeS != 25*60 || sb.Serial != "9RK1XXXX" ||
		sb.SmartPassed != nil || sb.TemperatureC != nil || sb.ExitStatus.Code != 2 {
		t.Errorf("standby report = %+v", sb)
	}

	// A disk asleep since zwatch started has no earlier reading.
	c2 := NewSmartCollector(SmartConfig{Timeout: time.Second, Devices: []SmartDevice{{Device: "/dev/sdh", Type: "sat"}}}, nil)
	c2.Root = t.TempDir()
	pub2 := &memPublisher{}
	if err := c2.Collect(context.Background(), pub2); err != nil {
		t.Fatal(err)
	}
	if r, ok := pub2.msgs[0].data.(smart.Report); !ok || !r.InStandby || r.LastReadingAgeS != nil || pub2.msgs[0].extra[0] != "/dev/sdh" {
		t.Errorf("first-sight standby = %+v", pub2.msgs[0])
	}
}

func TestSmartCollectorScan(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("scan", "scan-nvme-unraid.json", 0)
	s.replayFixture("/dev/nvme0", "nvme-corsair-mp510-err-log-entries.json", 0)
	c := NewSmartCollector(SmartConfig{Timeout: time.Second}, nil)
	c.Root = t.TempDir()
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	r := pub.reports()["yes"] // the fixture's serial, as its publisher left it
	if r == nil || r.NVMe == nil || r.NVMe.NumErrLogEntries != 8382 || r.Transport != "nvme" {
		t.Errorf("reports = %+v, errors = %+v", pub.reports(), pub.errors())
	}
	if !strings.Contains(s.argv(), "-d nvme /dev/nvme0") {
		t.Errorf("scan type not passed on:\n%s", s.argv())
	}
}

func TestSmartCollectorCommandLineRejected(t *testing.T) {
	s := newStandIn(t)
	s.replay("/dev/sda", capturedBadNArg, 1)
	c := NewSmartCollector(SmartConfig{Timeout: time.Second, Devices: []SmartDevice{{Device: "/dev/sda"}}}, nil)
	c.Root = t.TempDir()
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	ce := pub.errors()["/dev/sda"]
	if !strings.Contains(ce.Message, "rejected its command line") || !strings.Contains(ce.Fix, "smartctl --version") {
		t.Errorf("error = %+v", ce)
	}
}

func TestSmartCollectorMissingSmartctl(t *testing.T) {
	c := NewSmartCollector(SmartConfig{Smartctl: filepath.Join(t.TempDir(), "smartctl"), Timeout: time.Second,
		Devices: []SmartDevice{{Device: "/dev/sda"}, {Device: "/dev/sdb"}}}, nil)
	c.Root = t.TempDir()
	pub := &memPublisher{}
	if err := c.Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 {
		t.Fatalf("got %d messages, want one error for a missing smartctl: %+v", len(pub.msgs), pub.msgs)
	}
	ce := pub.errors()["/dev/sda"]
	if ce.Kind != execx.KindMissing || !strings.Contains(ce.Fix, "install smartmontools") {
		t.Errorf("error = %+v", ce)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// zwatch disks reads what the daemon publishes, without a bus.
func TestSmartReadHoldsWhatCollectPublishes(t *testing.T) {
	s := newStandIn(t)
	s.replayFixture("/dev/sda", "sata-hdd-wd140edfz-healthy.json", 0)
	s.replay("/dev/sdd", capturedDenied, 2)
	cfg := SmartConfig{Timeout: time.Second, Devices: []SmartDevice{{Device: "/dev/sda"}, {Device: "/dev/sdd", Type: "sat"}}}
	c := NewSmartCollector(cfg, nil)
	c.Root = t.TempDir()
	r, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Disks) != 1 || r.Disks[0].Target != "9RK1XXXX" || r.Disks[0].Report.Model != "WDC WD140EDFZ-11A0VA0" {
		t.Errorf("disks %+v", r.Disks)
	}
	if len(r.Errors) != 1 || r.Errors[0].Target != "/dev/sdd" || r.Errors[0].Kind != execx.KindDenied {
		t.Errorf("errors %+v", r.Errors)
	}
	pub := &memPublisher{}
	if err := NewSmartCollector(cfg, nil).Collect(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	if reps, errs := pub.reports(), pub.errors(); len(pub.msgs) != 2 || reps["9RK1XXXX"] == nil || errs["/dev/sdd"].Kind != execx.KindDenied {
		t.Errorf("published %+v", pub.msgs)
	}
}
