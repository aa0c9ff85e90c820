package rules_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/views/metrics"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/web"
)

// The hard case's alert (catalogue_hard_case_test.go: a rule with a
// threshold and a memory over a kind of fact defined only in that test)
// reaches the status page and /metrics with no code of the views: they
// show every alert the engine's state holds, whatever rule raised it.
func TestCatalogueSeamHardCaseViews(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The kind is not in facts.Kinds(): its subject is added to the stream here.
	b, err := bus.Open(ctx, bus.Options{FactSubjects: append(facts.StreamSubjects(), rules.TapeLibrary.Filter("*")), StateDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kv, err := b.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		t.Fatal(err)
	}

	engine := rules.NewEngineWith(config.DefaultRules(), rules.HardCaseCatalogue(), nil)
	now := time.Now()
	for _, at := range []time.Time{now.Add(-8 * 24 * time.Hour), now} {
		pub := &collectors.BusPublisher{Bus: b, Host: "nas1", Now: func() time.Time { return at }}
		if err := pub.Publish(ctx, rules.TapeLibrary.Name(), "tape_library", rules.TapeReport(3)); err != nil {
			t.Fatal(err)
		}
		msg, err := bus.Wrap(rules.TapeLibrary.Name(), "nas1", "tape_library", at, rules.TapeReport(3))
		if err != nil {
			t.Fatal(err)
		}
		env, err := bus.Decode(msg, rules.TapeLibrary.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := engine.Observe(env, at); err != nil {
			t.Fatal(err)
		}
	}
	hb := &collectors.BusPublisher{Bus: b, Host: "nas1"}
	if err := hb.Publish(ctx, facts.Heartbeat.Name(), "", facts.HeartbeatData{Started: now}); err != nil {
		t.Fatal(err)
	}
	// The same report again is no news (deduplicated); the re-evaluation
	// the runner makes every second finds the drive overdue.
	engine.Tick(now)
	if got := engine.Alerts("nas1"); len(got) != 1 {
		t.Fatalf("the engine holds %+v", got)
	}
	if err := engine.Save(ctx, kv); err != nil {
		t.Fatal(err)
	}

	loaded, err := config.Parse(strings.NewReader("host: nas1\n"), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	view := statusview.New(b, &loaded.Config)
	page, err := web.NewHandler(web.Options{View: view, Metrics: metrics.Handler(metrics.Options{View: view})})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		page.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, body)
		}
		return string(body)
	}
	summary := "tape drive 3 has asked for cleaning since " + now.Add(-8*24*time.Hour).UTC().Format("2006-01-02")
	if body := get("/?host=nas1"); !strings.Contains(body, "TapeCleaningOverdue") || !strings.Contains(body, summary) {
		t.Errorf("the status page does not show the alert %q", summary)
	}
	want := `zwatch_alerts{alertname="TapeCleaningOverdue",host="nas1",severity="warning",state="firing"} 1`
	if body := get("/metrics"); !strings.Contains(body, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, body)
	}
}
