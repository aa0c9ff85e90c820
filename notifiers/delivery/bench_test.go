package delivery_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/webhook"
)

// Time from a notification published on the bus to the request reaching a
// local service. Run: go test -run '^$' -bench Delivery -benchtime 200x ./notifiers

func BenchmarkDeliveryWebhook(b *testing.B) {
	s := notifytest.StartHTTP(b, "")
	cfg := notifytest.NotifyConfig(config.ChannelConfig{Name: "hook", Type: "webhook", Settings: webhook.Config{URL: s.URL}})
	benchDelivery(b, cfg, func() { <-s.Got })
}

func BenchmarkDeliverySMTP(b *testing.B) {
	cert := notifytest.NewCert(b)
	sink := notifytest.StartSMTP(b, notifytest.SinkStartTLS, &cert, "nas1", "pw", "")
	cfg := notifytest.NotifyConfig(notifytest.EmailChannel("mail", sink.Port, "starttls", "nas1", "pw", cert.CAFile, "ops@example.net"))
	benchDelivery(b, cfg, func() { <-sink.Got })
}

func benchDelivery(b *testing.B, cfg config.NotifyConfig, arrived func()) {
	bus := notifytest.OpenBus(b, b.TempDir())
	defer bus.Close()
	stop := notifytest.RunNotifiers(b, bus, cfg, delivery.Options{Guide: notifytest.Guide})
	defer stop()
	// Warm up: consumer created, connections and TLS sessions set up.
	notifytest.Publish(b, bus, notifytest.Firing("nas1", "warmup"))
	arrived()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		n := notifytest.Firing("nas1", fmt.Sprintf("bench-%d", i))
		start := time.Now()
		notifytest.Publish(b, bus, n)
		arrived()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}
