package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// TestScrapeEveryRecordedCapture publishes every capture of the real
// OpenZFS 2.3.2 harness that has zpool status and zpool list (resilvering,
// replacing, spares in use, dRAID, log and cache vdevs, a full pool, a
// paused scrub…) as one host each, and scrapes them all at once: the output
// passes promtool, and no series is dropped as a duplicate.
func TestScrapeEveryRecordedCapture(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	lists, err := filepath.Glob(filepath.Join(viewtest.Captured(), "*.zpool-list-Hp.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, l := range lists {
		prefix := strings.TrimSuffix(filepath.Base(l), ".zpool-list-Hp.txt")
		if _, err := os.Stat(filepath.Join(viewtest.Captured(), prefix+".zpool-status-p-P.txt")); err != nil {
			continue
		}
		viewtest.Publish(ctx, t, b, prefix, prefix)
		hosts = append(hosts, prefix)
	}
	if len(hosts) < 15 {
		t.Fatalf("only %d captures found in %s", len(hosts), viewtest.Captured())
	}
	cfg := config.Default()
	cfg.Host = "server"
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	code, text := scrape(t, Handler(Options{View: statusview.New(b, &cfg), Log: log}), nil)
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	promtoolCheck(t, text)
	if logs.Len() > 0 {
		t.Errorf("the scrape logged:\n%s", logs.String())
	}
	fams := families(t, text)
	for _, h := range hosts {
		if len(series(fams, "zfs_pool_health", map[string]string{"host": h})) == 0 {
			t.Errorf("host %s: no pool health", h)
		}
	}
	// A spare in use is in the data tree and in the spares list: both rows.
	if v := value(t, fams, "zwatch_vdev_health", map[string]string{"host": "f2-spare-inuse", "class": "spares"}); v != 8 {
		t.Errorf("f2-spare-inuse's spare: health %v, want 8 (INUSE)", v)
	}
	if v := value(t, fams, "zwatch_pool_scan_progress_ratio", map[string]string{"host": "b2-resilvering", "function": "resilver"}); v <= 0 || v > 1 {
		t.Errorf("b2-resilvering's resilver progress %v, want in (0, 1]", v)
	}
	if v := value(t, fams, "zwatch_pool_scan_info", map[string]string{"host": "j2-paused", "function": "scrub"}); v != 1 {
		t.Errorf("j2-paused: scan info %v", v)
	}
}
