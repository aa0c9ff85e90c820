package history

import (
	"context"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
)

// BenchmarkIngest is the writer's cost per fact: a capacity fact inside a
// raw slot already taken (most of them), and SMART and status facts that
// each open a slot and store a point (stored without waiting, acked in
// batches as Run does).
func BenchmarkIngest(b *testing.B) {
	bs := openBus(b, "")
	defer bs.Close()
	s := openStore(b, bs, testConfig())
	ctx := context.Background()
	sim := newSimulation(b, s, "nas1")
	w := sim.w
	list := facts.CapacityData{Pools: sim.lists}
	b.Run("capacity-skipped", func(b *testing.B) {
		env := wrap(b, facts.ZpoolCapacity.Name(), "nas1", time.Unix(simStart, 0), list)
		subject := factSubject("nas1", facts.ZpoolCapacity.Name())
		w.ingest(ctx, subject, env)
		next := wrap(b, facts.ZpoolCapacity.Name(), "nas1", time.Unix(simStart+10, 0), list)
		b.ResetTimer()
		for b.Loop() {
			w.ingest(ctx, subject, next)
		}
	})
	r := sim.disks[0]
	smartNext, statusNext := simStart, simStart
	b.Run("smart-stored", func(b *testing.B) {
		benchStored(b, w, factSubject("nas1", facts.Smart.Name(), r.Serial), smartEvery, &smartNext, func(at time.Time) []byte {
			return wrap(b, facts.Smart.Name(), "nas1", at, r)
		})
	})
	b.Run("status-stored", func(b *testing.B) {
		benchStored(b, w, factSubject("nas1", facts.ZpoolStatus.Name()), 300, &statusNext, func(at time.Time) []byte {
			return wrap(b, facts.ZpoolStatus.Name(), "nas1", at, facts.StatusData{Source: "json", Pools: sim.status})
		})
	})
}

// benchStored ingests b.N facts each a step later than the one before
// (made before the timer starts), from where the previous run left off.
func benchStored(b *testing.B, w *writer, subject string, step int64, next *int64, mk func(time.Time) []byte) {
	ctx := context.Background()
	envs := make([][]byte, b.N)
	for i := range envs {
		envs[i] = mk(time.Unix(*next, 0))
		*next += step
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.ingest(ctx, subject, envs[i])
	}
	w.flush(ctx)
}

// BenchmarkQueryMonthOfDisk is a page's plot of a disk over 30 days:
// raw points for most of it, daily aggregates before.
func BenchmarkQueryMonthOfDisk(b *testing.B) {
	bs := openBus(b, "")
	defer bs.Close()
	s := openStore(b, bs, testConfig())
	ctx := context.Background()
	sim := newSimulation(b, s, "nas1")
	sim.run(ctx, simStart, simStart+35*86400)
	src := Source(SourceDisk, sim.disks[0].Serial)
	from, to := time.Unix(simStart+5*86400, 0), time.Unix(simStart+35*86400, 0)
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Query(ctx, "nas1", src, from, to); err != nil {
			b.Fatal(err)
		}
	}
}
