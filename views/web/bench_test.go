package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/web"
)

// bigView serves one host of 3 pools and 24 disks: the recorded view's
// pools and disks repeated under new names, so the render costs what a
// full 24-bay box's does.
type bigView struct{ host statusview.Host }

func (v bigView) Hosts(context.Context) ([]statusview.HostSummary, error) {
	return []statusview.HostSummary{{Host: v.host.Host, Pools: len(v.host.Pools)}}, nil
}
func (v bigView) Host(context.Context, string) (statusview.Host, error) { return v.host, nil }
func (v bigView) LocalHost() string                                     { return v.host.Host }

func grow(h statusview.Host, pools, disks int) statusview.Host {
	out := h
	out.Pools, out.Disks = nil, nil
	for i := range pools {
		p := h.Pools[i%len(h.Pools)]
		p.Name = fmt.Sprintf("%s%d", p.Name, i)
		out.Pools = append(out.Pools, p)
	}
	for i := range disks {
		d := h.Disks[i%len(h.Disks)]
		d.Serial = fmt.Sprintf("%s-%02d", d.Serial, i)
		out.Disks = append(out.Disks, d)
	}
	return out
}

func benchPage(b *testing.B, v web.View, login bool, f *fixture) {
	benchPath(b, v, login, f, "/")
}

func benchPath(b *testing.B, v web.View, login bool, f *fixture, path string) {
	h, err := web.NewHandler(web.Options{Config: f.cfg.HTTP, View: v, History: f.history, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if login {
		req.SetBasicAuth(loginName, loginPassword)
	}
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/response")
}

// BenchmarkPage renders / for a 3-pool, 24-disk host (render only) and for
// the recorded host read from the real bus (reader and render), and
// answers one disk's two days of history from the real store.
func BenchmarkPage(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newFixture(b, ctx, true)
	h := f.settled(b, ctx)
	big := grow(h, 3, 24)
	b.Run("render-3pools-24disks", func(b *testing.B) { benchPage(b, bigView{big}, true, f) })
	b.Run("bus-reader-recorded-host", func(b *testing.B) { benchPage(b, f.view, true, f) })
	b.Run("api-history-disk-2d", func(b *testing.B) {
		benchPath(b, f.view, true, f, "/api/history?source=disk/WD-WCC7K0000001&range=2d")
	})
}
