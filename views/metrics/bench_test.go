package metrics

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/collectors"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/views/statusview"
	"github.com/zwatch/zwatch/views/statusview/viewtest"
)

// BenchmarkScrape24Disks3Pools scrapes, through the real reader on a real
// bus, a host with the 3 pools of the f3-draid capture, the ARC of the a
// capture and 24 disks: the recorded smartctl outputs of the captures
// (ATA, SATA SSD, NVMe, SAS) as viewtest publishes them, and five more
// copies of each under its serial with a suffix: a 24-bay box of those disks.
func BenchmarkScrape24Disks3Pools(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bb := viewtest.OpenBus(ctx, b)
	viewtest.Publish(ctx, b, bb, "nas", "f3-draid")
	pub := &collectors.BusPublisher{Bus: bb, Host: "nas"}
	for _, f := range viewtest.SmartFiles {
		raw, err := os.ReadFile(filepath.Join(viewtest.Captured(), f))
		if err != nil {
			b.Fatal(err)
		}
		for i := range 5 {
			rep, err := smart.Parse(bytes.NewReader(raw))
			if err != nil {
				b.Fatal(err)
			}
			rep.Serial = fmt.Sprintf("%s-%d", rep.Serial, i)
			if err := pub.Publish(ctx, facts.Smart.Name(), "smart", rep, rep.Serial); err != nil {
				b.Fatal(err)
			}
		}
	}
	arc := &collectors.ARC{Path: filepath.Join(viewtest.Captured(), "a.arcstats.txt")}
	if err := arc.Collect(ctx, pub); err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	cfg.Host = "nas"
	r := statusview.New(bb, &cfg)
	hosts, err := r.All(ctx)
	if err != nil || len(hosts) != 1 || len(hosts[0].Pools) != 3 || len(hosts[0].Disks) != 24 {
		b.Fatalf("fixture: %v hosts, err %v", len(hosts), err)
	}
	h := Handler(Options{View: r, Version: "bench"})
	code, text := scrape(b, h, nil)
	if code != http.StatusOK {
		b.Fatalf("status %d", code)
	}
	b.Logf("%d disks, %d pools, %d bytes of metrics per scrape", len(hosts[0].Disks), len(hosts[0].Pools), len(text))
	b.Run("with-bus-read", func(b *testing.B) {
		for b.Loop() {
			if code, _ := scrape(b, h, nil); code != http.StatusOK {
				b.Fatalf("status %d", code)
			}
		}
	})
	// The same view already read: what the metrics themselves cost.
	outbox, err := r.Outbox(ctx)
	if err != nil {
		b.Fatal(err)
	}
	encodeOnly := Handler(Options{View: &fixedView{hosts: hosts, outbox: outbox}, Version: "bench"})
	b.Run("encode-only", func(b *testing.B) {
		for b.Loop() {
			if code, _ := scrape(b, encodeOnly, nil); code != http.StatusOK {
				b.Fatalf("status %d", code)
			}
		}
	})
}
