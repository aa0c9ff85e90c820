package rules

import (
	"time"

	"github.com/zwatch/zwatch/bus"
)

// Position is where a fact sits in the facts stream. The stream sequence
// orders the facts of one source whatever the publishers' clocks say: a
// host whose clock steps back, or agents whose clocks disagree, still
// publish in sequence order.
type Position struct {
	// Stream identifies the stream the sequence counts in (its creation
	// time): a stream that is deleted and created again starts at 1, and
	// the sequences remembered from the old one must not make the new
	// one's facts look old.
	Stream string
	// Subject, with the envelope's collector, names the source.
	Subject string
	// Seq is the stream sequence; 0 means unknown (the fact is applied).
	Seq uint64
	// At is when the stream stored the fact; zero when not known.
	At time.Time
}

// maxSources bounds the sequences remembered per host: every kind of fact
// plus one SMART subject per disk fits many times over. Past it the source
// heard from longest ago is forgotten first.
const maxSources = 1024

// ObserveSeq is Observe for a fact read from the facts stream at pos. A fact
// not newer than the last one applied for its source is ignored: after a
// crash between saving the state and acknowledging a fact, the bus delivers
// that fact again, after facts that came later, and applying it would bring
// back a state that has ended.
func (e *Engine) ObserveSeq(env bus.Envelope, pos Position, now time.Time) error {
	src := sourceKey(pos.Subject, env.Collector)
	if h := e.hosts[env.Host]; h != nil && pos.Seq > 0 && h.stale(pos.Stream, src, pos.Seq) {
		e.log.Info("rules: ignoring a fact older than one already applied", "subject", pos.Subject,
			"seq", pos.Seq, "applied", h.Applied[src], "collected_at", env.CollectedAt)
		return nil
	}
	if err := e.observeAt(env, pos.At, now); err != nil {
		return err
	}
	if pos.Seq > 0 {
		e.host(env.Host).applied(pos.Stream, src, pos.Seq)
	}
	return nil
}

// sourceKey names one source of facts: its subject (host, kind and target)
// and the collector that published it. Collectors that share a subject
// (collector.error) are separate sources: one's error does not make
// another's older one stale.
func sourceKey(subject, collector string) string { return subject + "|" + collector }

// stale reports whether the fact at seq of src is not newer than the last
// one applied from the same stream.
func (h *hostState) stale(stream, src string, seq uint64) bool {
	if h.Stream != stream {
		return false
	}
	last, ok := h.Applied[src]
	return ok && seq <= last
}

// applied records seq as the last fact applied from src. A new stream
// voids every sequence of the old one.
func (h *hostState) applied(stream, src string, seq uint64) {
	if h.Stream != stream || h.Applied == nil {
		h.Stream, h.Applied = stream, map[string]uint64{}
	}
	h.Applied[src] = seq
	h.touched = true
	for len(h.Applied) > maxSources {
		oldest, low := "", uint64(0)
		for k, v := range h.Applied {
			if oldest == "" || v < low {
				oldest, low = k, v
			}
		}
		delete(h.Applied, oldest)
	}
}
