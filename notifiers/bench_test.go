package notifiers

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

// Time from a notification published on the bus to the request reaching a
// local service. Run: go test -run '^$' -bench Delivery -benchtime 200x ./notifiers

func BenchmarkDeliveryWebhook(b *testing.B) {
	s := startHTTP(b, "")
	cfg := notifyConfig(config.ChannelConfig{Name: "hook", Type: config.ChannelWebhook, URL: s.URL})
	benchDelivery(b, cfg, func() { <-s.got })
}

func BenchmarkDeliverySMTP(b *testing.B) {
	cert := newTestCert(b)
	sink := startSMTP(b, sinkStartTLS, &cert, "nas1", "pw", "")
	cfg := notifyConfig(emailChannel(b, "mail", sink.Port, "starttls", "nas1", "pw", cert.caFile, "ops@example.net"))
	benchDelivery(b, cfg, func() { <-sink.got })
}

func benchDelivery(b *testing.B, cfg config.NotifyConfig, arrived func()) {
	bus := openBus(b, b.TempDir())
	defer bus.Close()
	stop := runNotifiers(b, bus, cfg, Options{Guide: testGuide})
	defer stop()
	// Warm up: consumer created, connections and TLS sessions set up.
	publish(b, bus, firingNotification("nas1", "warmup"))
	arrived()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		n := firingNotification("nas1", fmt.Sprintf("bench-%d", i))
		start := time.Now()
		publish(b, bus, n)
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
