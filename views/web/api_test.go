package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

func TestAPIAnswersAndRefusesBadParameters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, true)
	f.settled(t, ctx)
	c := client{t: t, base: serve(t, f, f.history), user: loginName, pass: loginPassword}

	var hosts []statusview.HostSummary
	decode(t, c.get("/api/hosts"), &hosts)
	if len(hosts) != 1 || hosts[0].Host != "nas1" || hosts[0].PoolsNotOnline != 1 {
		t.Errorf("/api/hosts: %+v", hosts)
	}
	var h statusview.Host
	decode(t, c.get("/api/host?host=nas1"), &h)
	if h.Host != "nas1" || len(h.Pools) != 2 || h.Pools[1].State != "DEGRADED" {
		t.Errorf("/api/host: %+v", h.Pools)
	}
	var res history.Result
	decode(t, c.get("/api/history?host=nas1&source=disk/WD-WCC7K0000001&range=2d"), &res)
	if res.Source != "disk/WD-WCC7K0000001" || res.To.Sub(res.From) != 48*time.Hour || len(res.Times) == 0 {
		t.Errorf("/api/history: %s %v..%v %d points", res.Source, res.From, res.To, len(res.Times))
	}
	from := time.Now().Add(-30 * time.Hour).UTC().Truncate(time.Second)
	decode(t, c.get("/api/history?source=pool/vault&from="+from.Format(time.RFC3339)), &res)
	if !res.From.Equal(from) || len(res.Times) == 0 || len(res.Series[history.SeriesCapacity].Mean) != len(res.Times) {
		t.Errorf("/api/history from: %v %d points, series %v", res.From, len(res.Times), res.Series)
	}
	// The recorded zpool list: vault is 2% full.
	if m := res.Series[history.SeriesCapacity].Mean; len(m) == 0 || m[0] == nil || *m[0] < 1 || *m[0] > 3 {
		t.Errorf("vault capacity %v", m)
	}
	if r := c.get("/api/history?source=disk/NOSUCHSERIAL"); r.code != http.StatusNotFound || !strings.Contains(r.body, "no history for this source") {
		t.Errorf("unknown source: %d %s", r.code, r.body)
	}
	if page := c.get("/?range=400d"); page.code != http.StatusOK || !strings.Contains(page.body, `data-range="400d"`) ||
		strings.Contains(page.body, `data-range="30d"`) || !strings.Contains(page.body, `range=400d" aria-current="true">400d</a>`) {
		t.Errorf("page with range=400d: %d", page.code)
	}
	if page := c.get("/?range=5d"); page.code != http.StatusBadRequest || !strings.Contains(page.body, `parameter range: "5d": the page plots one of 30d, 1d, 7d, 400d`) {
		t.Errorf("page with range=5d: %d %s", page.code, page.body)
	}
	var events []history.Event
	for {
		decode(t, c.get("/api/events?host=nas1&range=400d&kind=scrub,alert"), &events)
		if hasEvent(events, "VdevState") || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !hasEvent(events, "VdevState") {
		t.Errorf("/api/events lacks the offline disk's alert: %+v", events)
	}
	decode(t, c.get("/api/events?kind=scrub"), &events)
	if len(events) != 0 {
		t.Errorf("scrub events of a pool never scrubbed: %+v", events)
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/history?source=disk/X&range=abc", http.StatusBadRequest, "parameter range: \"abc\" is not a positive duration"},
		{"/api/history?source=disk/X&range=-1h", http.StatusBadRequest, "parameter range"},
		{"/api/history?source=disk/X&range=4000d", http.StatusBadRequest, "parameter range: longer than 3650d"},
		{"/api/history?source=disk/X&range=1d&from=2026-01-01T00:00:00Z", http.StatusBadRequest, "either range or from/to"},
		{"/api/history?source=disk/X&from=yesterday", http.StatusBadRequest, "parameter from: \"yesterday\" is not an RFC 3339 time"},
		{"/api/history?source=disk/X&to=2026-13-01", http.StatusBadRequest, "parameter to"},
		{"/api/history?source=disk/X&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", http.StatusBadRequest, "is not before to"},
		{"/api/history?source=disk", http.StatusBadRequest, "parameter source: \"disk\": want disk/SERIAL or pool/NAME"},
		{"/api/history?source=vm/a", http.StatusBadRequest, "parameter source"},
		{"/api/history", http.StatusBadRequest, "parameter source"},
		{"/api/history?host=nas9&source=disk/X", http.StatusNotFound, `no host "nas9"`},
		{"/api/events?kind=reboot", http.StatusBadRequest, `parameter kind: "reboot": want scrub, resilver, alert or action`},
		{"/api/events?host=nas9", http.StatusNotFound, "no host"},
		{"/api/events?range=0s", http.StatusBadRequest, "parameter range"},
	} {
		r := c.get(tc.path)
		var e struct{ Error string }
		_ = json.Unmarshal([]byte(r.body), &e)
		if r.code != tc.code || !strings.Contains(e.Error, tc.want) || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s, want %d saying %s", tc.path, r.code, strings.TrimSpace(r.body), tc.code, tc.want)
		}
	}
}

// TestNoSecretInAnyResponse reads every page, endpoint, static file and
// error with the fixture's channels (tokens, a URL key, a bearer header, an
// SMTP password) and login configured, with dead letters from a channel
// that refused: none of their secrets may show.
func TestNoSecretInAnyResponse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, true)
	h := f.settled(t, ctx)
	base := serve(t, f, f.history)
	c := client{t: t, base: base, user: loginName, pass: loginPassword}
	paths := []string{"/", "/?host=nas1", "/?host=nas9", "/api/hosts", "/api/host", "/api/host?host=nas1", "/api/host?host=nas9",
		"/api/events?range=400d", "/api/history?range=bad", "/api/nothing", "/metrics", "/static/app.js", "/static/style.css",
		"/static/vendor/uplot/uPlot.iife.min.js", "/static/vendor/uplot/README.md", "/nothing"}
	for _, d := range h.Disks {
		paths = append(paths, "/api/history?source=disk/"+d.Serial)
	}
	var all []response
	for _, p := range paths {
		all = append(all, c.get(p), c.do(http.MethodPost, p))
	}
	all = append(all, client{t: t, base: base}.get("/api/host"), client{t: t, base: base, user: loginName, pass: "x"}.get("/"))
	dead := 0
	for _, r := range all {
		var text strings.Builder
		text.WriteString(r.body)
		for k, v := range r.header {
			text.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		for _, s := range f.secrets {
			if strings.Contains(text.String(), s) {
				t.Errorf("a response holds the secret %q:\n%s", s, text.String())
			}
		}
		dead += strings.Count(r.body, "dead_at")
	}
	if dead == 0 {
		t.Error("no dead letter in any response: the check did not cover them")
	}
}

func decode(t *testing.T, r response, v any) {
	t.Helper()
	if r.code != http.StatusOK {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, r.body)
	}
}

func hasEvent(events []history.Event, alert string) bool {
	for _, e := range events {
		if e.Kind == history.EventAlert && e.Alert == alert && e.Status == "firing" {
			return true
		}
	}
	return false
}

// TestNoGoroutineLeftPerRequest makes many requests of every kind and
// checks that the goroutines come back to what they were.
func TestNoGoroutineLeftPerRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := newFixture(t, ctx, true)
	f.settled(t, ctx)
	c := client{t: t, base: serve(t, f, f.history), user: loginName, pass: loginPassword}
	paths := []string{"/", "/api/hosts", "/api/host", "/api/history?source=pool/vault", "/api/events", "/api/history?range=x", "/static/app.js"}
	settle := func() int {
		http.DefaultClient.CloseIdleConnections()
		time.Sleep(500 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	for _, p := range paths { // warm: the first requests start the bus's own goroutines
		c.get(p)
	}
	before := settle()
	for range 10 {
		for _, p := range paths {
			c.get(p)
		}
	}
	after := settle()
	t.Logf("goroutines before %d, after %d requests %d", before, 10*len(paths), after)
	if after > before+3 {
		t.Errorf("goroutines grew from %d to %d over %d requests", before, after, 10*len(paths))
	}
}
