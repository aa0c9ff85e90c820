package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/views/history"
)

// `zwatch history export` reads the running daemon's history through its
// bus: CSV and JSON of a source, clear errors for an unknown source, a bad
// time or format, and for a store that has no history.
func TestHistoryExport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	state := t.TempDir()
	cfgPath := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\nhistory:\n  max_mb: 16\n", state))
	l, err := config.Load(cfgPath, catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	b := openDaemonBus(t, ctx, cfgPath)
	defer b.Close()
	s, err := history.Open(ctx, b.JS, l.Config.History, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = s.Run(rctx) }()
	// The writer takes each subject's newest fact at its start: wait
	// for it to read before publishing, so that it sees every one.
	for st, _ := b.JS.Stream(ctx, bus.StreamFacts); ; time.Sleep(20 * time.Millisecond) {
		if info, err := st.Info(ctx); err == nil && info.State.Consumers > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the history writer never started reading the facts")
		}
	}

	f, err := os.Open("../../testdata/smartctl/sata-hdd-wd140edfz-healthy.json")
	if err != nil {
		t.Fatal(err)
	}
	report, err := smart.Parse(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	lf, err := os.Open(captured + "j4-errors.zpool-list-Hp.txt")
	if err != nil {
		t.Fatal(err)
	}
	lists, err := zfs.ParseList(lf)
	lf.Close()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for k := range 6 {
		at := t0.Add(time.Duration(k) * 30 * time.Minute)
		temp := 30 + k
		report.TemperatureC = &temp
		for subject, data := range map[string]any{
			bus.Subject("nas1", facts.Smart.Name(), report.Serial): report,
			bus.Subject("nas1", facts.ZpoolCapacity.Name()):        facts.CapacityData{Pools: lists},
		} {
			kind, _, _ := strings.Cut(strings.TrimPrefix(subject, "zwatch.v1.nas1."), "."+bus.Token(report.Serial))
			msg, err := bus.Wrap(kind, "nas1", "test", at, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Publish(ctx, subject, msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	disk := history.Source(history.SourceDisk, report.Serial)
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := s.Query(ctx, "nas1", disk, t0, t0.Add(3*time.Hour))
		if err == nil && len(res.Times) == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer stored no 6 points of %s: %v (%d)", disk, err, len(res.Times))
		}
		time.Sleep(50 * time.Millisecond)
	}

	out, errOut, code := run(t, "-c", cfgPath, "history", "export", "--source", disk, "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T03:00:00Z")
	if code != exitOK {
		t.Fatalf("export exits %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var temps []string
	for _, r := range rows[1:] {
		if r[4] == history.SeriesTemperature {
			temps = append(temps, r[7])
		}
	}
	if strings.Join(temps, " ") != "30 31 32 33 34 35" {
		t.Errorf("temperatures %v, want 30 to 35", temps)
	}

	out, errOut, code = run(t, "-c", cfgPath, "history", "export", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T03:00:00Z", "--format", "json")
	if code != exitOK {
		t.Fatalf("export --format json exits %d: %s", code, errOut)
	}
	var doc struct {
		Sources []history.Result `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sources) != 2 {
		t.Errorf("JSON of every source: %d sources, want the disk and pool/tank", len(doc.Sources))
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--source", "disk/NOPE", "--from", "2026-03-01T00:00:00Z"}, exitFailure, "pool/tank"},
		{[]string{"--source", "tank"}, exitUsage, "want disk/SERIAL or pool/NAME"},
		{[]string{"--from", "yesterday"}, exitUsage, "--from \"yesterday\""},
		{[]string{"--format", "xml"}, exitUsage, "want csv or json"},
	} {
		_, errOut, code := run(t, append([]string{"-c", cfgPath, "history", "export"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("export %v: exit %d, %q; want exit %d saying %q", c.args, code, errOut, c.code, c.want)
		}
	}

	// A store where no daemon with history ever ran.
	empty := writeConfig(t, fmt.Sprintf("host: nas1\nstate_dir: %s\nnotify:\n  console: false\n", t.TempDir()))
	_, errOut, code = run(t, "-c", empty, "history", "export")
	if code != exitNoData || !strings.Contains(errOut, "no history on this bus") {
		t.Errorf("export of a store without history: exit %d, %q", code, errOut)
	}
}
