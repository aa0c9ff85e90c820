package collectors

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// BenchmarkPollCycleStatus is one zpool status poll as the daemon runs it:
// exec of a stand-in that prints the real 2.3.2 JSON, parse, publish. The
// stand-in is /bin/sh + cat, a lower bound for the cost of zpool itself.
func BenchmarkPollCycleStatus(b *testing.B) {
	zpool := zpoolStandIn(b, b.TempDir(), "zpool", map[string]string{
		"version":                    captured + "a.version.txt",
		"status -j --json-int -p -P": captured + "a.zpool-status-j.json",
	})
	c := &ZpoolStatus{Runner: execx.New(10 * time.Second), Zpool: zpool}
	pub := &memPublisher{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.Collect(context.Background(), pub); err != nil {
			b.Fatal(err)
		}
		pub.msgs = pub.msgs[:0]
	}
}

// BenchmarkPollCycleStatusZwatchOnly is the same cycle without the exec:
// what zwatch itself adds to each poll.
func BenchmarkPollCycleStatusZwatchOnly(b *testing.B) {
	data, err := os.ReadFile(captured + "a.zpool-status-j.json")
	if err != nil {
		b.Fatal(err)
	}
	pub := &memPublisher{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pools, err := zfs.ParseStatusJSON(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		pub.Publish(context.Background(), "zpool.status", "zpool_status", facts.StatusData{Source: "json", Pools: pools})
		pub.msgs = pub.msgs[:0]
	}
}
