package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/views/metrics"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
	"github.com/zwatch/zwatch/views/web"
)

type client struct {
	t    *testing.T
	base string
	user string
	pass string
}

type response struct {
	code   int
	header http.Header
	body   string
}

func (c client) do(method, path string) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		c.t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

func (c client) get(path string) response { c.t.Helper(); return c.do(http.MethodGet, path) }

// serve starts the handler over the fixture with the fixture's login.
func serve(t *testing.T, f *fixture, hist web.History) string {
	t.Helper()
	h, err := web.NewHandler(web.Options{Config: f.cfg.HTTP, View: f.view, History: hist, Version: "test",
		Metrics: metrics.Handler(metrics.Options{View: f.view, Version: "test"})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLoginGuardsEveryPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	base := serve(t, f, nil)
	paths := []string{"/", "/api/hosts", "/api/host", "/api/history?source=pool/vault", "/metrics", "/static/app.js", "/nothing"}
	for _, c := range []struct {
		name string
		cl   client
	}{
		{"no login", client{t: t, base: base}},
		{"wrong password", client{t: t, base: base, user: loginName, pass: "wrong"}},
		{"unknown name", client{t: t, base: base, user: "root", pass: loginPassword}},
		{"empty password", client{t: t, base: base, user: loginName}},
	} {
		for _, p := range paths {
			r := c.cl.get(p)
			if r.code != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), `realm="zwatch"`) {
				t.Errorf("%s %s: %d %q, want 401 with the realm", c.name, p, r.code, r.header.Get("WWW-Authenticate"))
			}
		}
	}
	ok := client{t: t, base: base, user: loginName, pass: loginPassword}
	for _, p := range []string{"/", "/api/hosts", "/api/host", "/metrics", "/static/app.js"} {
		if r := ok.get(p); r.code != http.StatusOK {
			t.Errorf("logged in %s: %d %s", p, r.code, r.body)
		}
	}
	if r := ok.get("/metrics"); !strings.Contains(r.body, `zfs_pool_health{host="nas1",pool="vault"} 1`) {
		t.Errorf("/metrics does not say vault is DEGRADED: %.2000s", r.body)
	}
}

func TestHeadersMethodsAndErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	f.settled(t, ctx)
	base := serve(t, f, nil)
	anon := client{t: t, base: base}
	c := client{t: t, base: base, user: loginName, pass: loginPassword}
	check := func(what string, r response) {
		t.Helper()
		for name, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'",
			"X-Content-Type-Options":  "nosniff",
			"X-Frame-Options":         "DENY",
			"Referrer-Policy":         "no-referrer",
		} {
			if !strings.Contains(r.header.Get(name), want) {
				t.Errorf("%s: header %s = %q, want %q", what, name, r.header.Get(name), want)
			}
		}
		if strings.Contains(r.header.Get("Content-Security-Policy"), "unsafe-inline") {
			t.Errorf("%s: CSP allows inline code", what)
		}
	}
	check("401", anon.get("/"))
	check("page", c.get("/"))
	check("api", c.get("/api/host"))
	check("404", c.get("/api/nothing"))
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		for _, p := range []string{"/", "/api/host", "/metrics"} {
			r := c.do(m, p)
			if r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d allow %q, want 405", m, p, r.code, r.header.Get("Allow"))
			}
			check("405", r)
		}
	}
	if r := c.do(http.MethodHead, "/"); r.code != http.StatusOK || r.body != "" {
		t.Errorf("HEAD /: %d %q", r.code, r.body)
	}
	page := c.get("/")
	if strings.Contains(page.body, "<script>") || strings.Contains(page.body, " onclick=") || strings.Contains(page.body, "style=") {
		t.Error("the page has inline script or style, which the CSP refuses")
	}
	if strings.Contains(page.body, "<form") && strings.Contains(page.body, `method="post"`) {
		t.Error("the page has a form that changes state")
	}

	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/host?host=nas9", http.StatusNotFound, `no host \"nas9\" on the bus (known: nas1)`},
		{"/?host=nas9", http.StatusNotFound, `no host "nas9"`},
		{"/api/history?source=pool/vault", http.StatusNotFound, "history is off"},
		{"/api/events", http.StatusNotFound, "history is off"},
		{"/api/nothing", http.StatusNotFound, "no such API endpoint"},
		{"/static/", http.StatusNotFound, "404 page not found"},
		{"/static/vendor/uplot/", http.StatusNotFound, "404 page not found"},
		{"/api/host?host=" + strings.Repeat("x", 300), http.StatusBadRequest, "parameter host: longer than 256 bytes"},
	} {
		r := c.get(tc.path)
		if r.code != tc.code || !strings.Contains(r.body, tc.want) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.path, r.code, r.body, tc.code, tc.want)
		}
		if strings.HasPrefix(tc.path, "/api/") {
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Error == "" {
				t.Errorf("%s: not a JSON error: %s", tc.path, r.body)
			}
		}
	}
}

// TestFleetHostPicker shows the picker when the bus holds two hosts, and
// each host's own page under /?host=.
func TestFleetHostPicker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f := newFixture(t, ctx, false)
	viewtest.Publish(ctx, t, f.bus, "nas2", "b4-online")
	f.settled(t, ctx)
	c := client{t: t, base: serve(t, f, f.history), user: loginName, pass: loginPassword}
	page := c.get("/")
	for _, want := range []string{`<nav class="hosts"`, `href="/?host=nas2"`, `aria-current="page">nas1 (1 not online)</a>`, "vault DEGRADED"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("nas1's page lacks %q", want)
		}
	}
	if strings.Contains(page.body, `class="plot"`) {
		t.Error("plots on the page with history off")
	}
	nas2 := c.get("/?host=nas2")
	if nas2.code != http.StatusOK || !strings.Contains(nas2.body, `<p id="summary" class="summary ok">All pools healthy</p>`) {
		t.Errorf("nas2's page: %d %s", nas2.code, nas2.body)
	}
	if r := c.get("/api/history?host=nas2&source=pool/vault"); r.code != http.StatusNotFound || !strings.Contains(r.body, "history is off") {
		t.Errorf("history with a nil store: %d %s", r.code, r.body)
	}
}

// TestEmptyBus serves the page before any host has reported.
func TestEmptyBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := viewtest.OpenBus(ctx, t)
	cfg := config.Default()
	cfg.Host = "nas1"
	h, err := web.NewHandler(web.Options{View: statusview.New(b, &cfg)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := client{t: t, base: srv.URL}
	if r := c.get("/"); r.code != http.StatusOK || !strings.Contains(r.body, "No host has reported yet") {
		t.Errorf("page on an empty bus: %d %s", r.code, r.body)
	}
	if r := c.get("/api/host"); r.code != http.StatusNotFound || !strings.Contains(r.body, "no host has reported") {
		t.Errorf("/api/host on an empty bus: %d %s", r.code, r.body)
	}
	if r := c.get("/api/hosts"); r.code != http.StatusOK || strings.TrimSpace(r.body) != "[]" {
		t.Errorf("/api/hosts on an empty bus: %d %s", r.code, r.body)
	}
}

// TestFleetEngineSection shows how fleet servers share the rule engine,
// read by fleet.Status from a real bus: a partitioned facts stream and the
// lease bucket's member and partition keys. One machine shows nothing.
func TestFleetEngineSection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{FactSubjects: facts.StreamSubjects(), StateDir: t.TempDir(), Partitions: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kv, err := fleet.LeaseKV(ctx, b.JS, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"member.srv-a_1": "srv-a/1", "member.srv-b_2": "srv-b/2",
		fleet.PartitionLease(0): "srv-a/1", fleet.PartitionLease(1): "srv-b/2", fleet.PartitionLease(2): "srv-b/2"} {
		if _, err := kv.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Host = "nas1"
	serveWith := func(engine func(context.Context) (*fleet.EngineStatus, error)) client {
		h, err := web.NewHandler(web.Options{View: statusview.New(b, &cfg), Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return client{t: t, base: srv.URL}
	}
	c := serveWith(func(ctx context.Context) (*fleet.EngineStatus, error) { return fleet.Status(ctx, b.JS) })
	page := c.get("/")
	for _, want := range []string{`<section id="engine">`, "8 partitions on 2 servers", "<strong>5 without a server</strong>",
		"<tr><td>srv-a/1</td><td>1</td><td>0</td></tr>", "<tr><td>srv-b/2</td><td>2</td><td>0</td></tr>"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %q:\n%s", want, page.body)
		}
	}
	api := c.get("/api/fleet")
	if api.code != http.StatusOK || !strings.Contains(api.body, `"partitions":8`) || !strings.Contains(api.body, `"owner":"srv-b/2"`) {
		t.Errorf("/api/fleet: %d %s", api.code, api.body)
	}
	one := serveWith(nil)
	if page := one.get("/"); strings.Contains(page.body, `id="engine"`) {
		t.Error("one machine's page shows the fleet's rule engine section")
	}
	if r := one.get("/api/fleet"); r.code != http.StatusNotFound || !strings.Contains(r.body, "no fleet servers") {
		t.Errorf("/api/fleet on one machine: %d %s", r.code, r.body)
	}
}
