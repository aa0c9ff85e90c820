package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
)

// toyReading is the payload of the new kind of fact the toy collector
// publishes.
type toyReading struct {
	Value int `json:"value"`
}

// kindToyReading is that kind.
var kindToyReading = facts.Define[toyReading]("toy.reading")

// toyFile is a collector written the way every collector is: a Read that
// reads and parses its source, and a Collect that publishes what Read
// returned. It lives in this test only.
type toyFile struct{ path string }

func (c *toyFile) Name() string { return "toy_file" }

func (c *toyFile) Read(context.Context) (toyReading, error) {
	b, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return toyReading{}, collectors.ErrNotAvailable
	}
	if err != nil {
		return toyReading{}, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return toyReading{}, &collectors.ParseError{Source: c.path, Err: err}
	}
	return toyReading{Value: n}, nil
}

func (c *toyFile) Collect(ctx context.Context, pub collectors.Publisher) error {
	return collectors.PublishRead(ctx, pub, kindToyReading, c.Name(), c.Read)
}

// A collector is one file and one table line: the toy above, appended to the
// table with an interval of its own, is configured by collectors.toy_file
// (checked by config with the catalogue made from the table), runs through
// the daemon's own component building on a real embedded bus at that
// interval, and its facts arrive on its subject. Nothing else changed.
func TestACollectorIsOneTableLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{
		// The new kind is not in facts.Kinds(): its subject is added here.
		FactSubjects: append(facts.StreamSubjects(), kindToyReading.Filter("*")),
		StateDir:     t.TempDir(),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	path := filepath.Join(t.TempDir(), "reading")
	if err := os.WriteFile(path, []byte("42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The collectors of no family (the disk inventory reads sysfs) stay out.
	var table []collectors.Spec
	for _, s := range collectors.Table() {
		if s.Family.Name != "" {
			table = append(table, s)
		}
	}
	// Its table line: a poll with an interval of its own, which the config
	// sets as collectors.toy_file.interval.
	table = append(table, collectors.Spec{
		Name:     "toy_file",
		Interval: time.Hour, MinInterval: time.Second,
		Poll: func(collectors.Env) collectors.Collector { return &toyFile{path: path} },
	})
	cat := config.Catalog{Collectors: collectors.Keys(table)}
	for yaml, want := range map[string]string{
		"collectors: {toy_file: {interval: 500ms}}": "collectors.toy_file.interval = \"500ms\": must be at least 1s, or 0 for the default (1h)",
		"collectors: {toy_fil: {interval: 2s}}":     `collectors.toy_fil: unknown collector: did you mean "toy_file"?; collectors with keys of their own: toy_file`,
	} {
		if _, err := config.Parse(strings.NewReader(yaml), cat); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
	loaded, err := config.Parse(strings.NewReader("host: nas1\nzfs: {enabled: false}\nsmart: {enabled: false}\ncollectors: {toy_file: {interval: 1s}}\n"), cat)
	if err != nil {
		t.Fatal(err)
	}
	cfg := loaded.Config
	tr := newTracker()
	comps := collectorComponents(&cfg, table, &collectors.BusPublisher{Bus: b, Host: cfg.Host}, tr, slog.New(slog.DiscardHandler))
	if len(comps) != 1 || comps[0].Name != "toy_file" {
		t.Fatalf("components %v, want the toy only (ZFS and SMART are off)", names(comps))
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { supervise(runCtx, comps, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { stop(); <-done }()

	st, err := b.JS.Stream(ctx, bus.StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	subject := bus.Subject(cfg.Host, kindToyReading.Name())
	var msg *jetstream.RawStreamMsg
	for msg == nil {
		msg, err = st.GetLastMsgForSubject(ctx, subject)
		if err != nil && ctx.Err() != nil {
			t.Fatalf("no fact on %s: %v", subject, err)
		}
		if err != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	var got toyReading
	env, err := bus.Decode(msg.Data, kindToyReading.Name(), &got)
	if err != nil || got.Value != 42 || env.Collector != "toy_file" || env.Host != "nas1" {
		t.Fatalf("fact %+v, envelope %+v, err %v", got, env, err)
	}
	// It polls at the interval its key set: a second reading within seconds.
	if err := os.WriteFile(path, []byte("43\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for got.Value != 43 {
		if ctx.Err() != nil {
			t.Fatalf("no second reading at collectors.toy_file.interval (1s): last %+v", got)
		}
		time.Sleep(50 * time.Millisecond)
		if msg, err = st.GetLastMsgForSubject(ctx, subject); err == nil {
			_, _ = bus.Decode(msg.Data, kindToyReading.Name(), &got)
		}
	}
	if h := tr.snapshot()["toy_file"]; h.Interval != time.Second || h.LastOK == nil {
		t.Errorf("heartbeat sees the toy as %+v", h)
	}
}

// A missing zpool disables every ZFS collector with one warning and one
// blind spot; a family the config switches off is one line.
func TestMissingToolIsOneBlindSpot(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := config.Default()
	missing := filepath.Join(t.TempDir(), "zpool")
	cfg.ZFS.Zpool, cfg.Smart.Enabled = missing, false
	tr := newTracker()
	comps := collectorComponents(&cfg, collectors.Table(), &collectors.BusPublisher{}, tr, log)
	// The collectors of no family (the disk inventory reads sysfs) need
	// no tool: only they run.
	toolFree := familyFree(collectors.Table())
	if got := names(comps); !slices.Equal(got, toolFree) || !slices.Contains(got, "disks") {
		t.Fatalf("components %v, want only %v", got, toolFree)
	}
	health := tr.snapshot()
	why := missing + " not found: install zfsutils-linux, or set zfs.zpool to its path"
	if len(health) != 1+len(toolFree) || health["zfs"].Disabled != why || health["disks"].Disabled != "" {
		t.Errorf("heartbeat %+v, want one zfs blind spot: %s", health, why)
	}
	for _, line := range []string{"ZFS monitoring is disabled: " + why, "SMART monitoring is disabled by the config (smart.enabled: false)"} {
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", line, n, logs.String())
		}
	}
}

// With every tool present the daemon starts the whole table in its order.
func TestCollectorComponentsFollowTheTable(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, _ := standInZpool(t, dir)
	cfg := config.Default()
	cfg.ZFS.Zpool, cfg.ZFS.Zfs, cfg.Smart.Smartctl = zpool, zfsCmd, zpool // any executable will do
	comps := collectorComponents(&cfg, collectors.Table(), &collectors.BusPublisher{}, newTracker(), slog.New(slog.DiscardHandler))
	want := []string{"zpool_list", "zpool_status", "pool_kstat", "arc", "zpool_events", "datasets", "snapshots", "zpool_import", "smart", "smart-urgent", "disks", "zfs_version"}
	// The family-free collectors after these (the kernel log follower) run too.
	for _, n := range familyFree(collectors.Table()) {
		if !slices.Contains(want, n) {
			want = append(want, n)
		}
	}
	if got := names(comps); !slices.Equal(got, want) {
		t.Errorf("components %v, want %v", got, want)
	}
	cfg.ZFS.FollowEvents = false
	comps = collectorComponents(&cfg, collectors.Table(), &collectors.BusPublisher{}, newTracker(), slog.New(slog.DiscardHandler))
	if got := names(comps); slices.Contains(got, "zpool_events") {
		t.Errorf("zfs.follow_events: false still follows: %v", got)
	}
}

// familyFree names the table's collectors that belong to no family, in order.
func familyFree(table []collectors.Spec) []string {
	var out []string
	for _, s := range table {
		if s.Family.Name == "" && (len(s.Platforms) == 0 || slices.Contains(s.Platforms, runtime.GOOS)) {
			out = append(out, s.Name)
		}
	}
	return out
}

func names(comps []Component) []string {
	var out []string
	for _, c := range comps {
		out = append(out, c.Name)
	}
	return out
}
