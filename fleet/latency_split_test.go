package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// latencySplit says where the time from a fact to its page went, for the
// hosts in published (when each one's fact was published): until the
// engine created the notification (its Created), until the outbox stored
// it (the alerts stream's timestamp of the message with its ID), and until
// the webhook had it. Each leg as p50/p99/max.
func latencySplit(ctx context.Context, alerts jetstream.Stream, h *hook, published map[string]time.Time) string {
	var engine, outbox, channel []time.Duration
	missing := 0
	for host, at := range published {
		n, ok := h.notification(host)
		got, _ := h.first(host)
		if !ok {
			continue
		}
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := alerts.GetLastMsgForSubject(gctx, bus.Subject(host, bus.KindAlert))
		cancel()
		if err != nil || m.Header.Get(jetstream.MsgIDHeader) != n.ID {
			missing++ // a later notification of the host is the last one
			continue
		}
		engine = append(engine, n.Created.Sub(at))
		outbox = append(outbox, m.Time.Sub(n.Created))
		channel = append(channel, got.Sub(m.Time))
	}
	leg := func(name string, d []time.Duration) string {
		if len(d) == 0 {
			return name + " -"
		}
		slices.Sort(d)
		r := func(x time.Duration) time.Duration { return x.Round(time.Millisecond) }
		return fmt.Sprintf("%s p50 %v, p99 %v, max %v", name, r(d[len(d)/2]), r(d[len(d)*99/100]), r(d[len(d)-1]))
	}
	s := strings.Join([]string{
		leg("fact -> engine's notification", engine),
		leg("-> stored in the outbox", outbox),
		leg("-> webhook", channel),
	}, "; ")
	if missing > 0 {
		s += fmt.Sprintf(" (%d hosts left out: their first page is no longer the outbox's last)", missing)
	}
	return s
}
