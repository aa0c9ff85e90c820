package history

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
)

const captured = "../../testdata/captured/zfs-2.3.2/"

// testConfig is the default history.
func testConfig() config.HistoryConfig { return config.DefaultHistory() }

// openBus starts a real embedded bus in dir (t.TempDir when "").
func openBus(t testing.TB, dir string) *bus.Bus {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := bus.Options{StateDir: dir, FactSubjects: facts.StreamSubjects(), HistoryMaxBytes: StreamCount * int64(testConfig().MaxMB) << 20}
	b, err := bus.Open(ctx, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openStore(t testing.TB, b *bus.Bus, cfg config.HistoryConfig) *Store {
	t.Helper()
	s, err := Open(context.Background(), b.JS, cfg, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// statusOf parses a recorded zpool status -j the way the collector does.
func statusOf(t testing.TB, name string) []*zfs.Pool {
	t.Helper()
	f, err := os.Open(filepath.Join(captured, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := zfs.ParseStatusJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return pools
}

// listOf parses a recorded zpool list -Hp.
func listOf(t testing.TB, name string) []zfs.PoolList {
	t.Helper()
	f, err := os.Open(filepath.Join(captured, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pools, err := zfs.ParseList(f)
	if err != nil {
		t.Fatal(err)
	}
	return pools
}

// smartOf parses a recorded smartctl -a -j.
func smartOf(t testing.TB, path string) *smart.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := smart.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wrap is a fact's envelope as the collectors publish it. The test's
// payloads always encode; it panics otherwise, as it also runs on the
// simulation's generating goroutine, where t.Fatal may not be called.
func wrap(_ testing.TB, kind, host string, at time.Time, data any) []byte {
	b, err := bus.Wrap(kind, host, "test", at, data)
	if err != nil {
		panic(err)
	}
	return b
}

// factSubject is where a fact of kind travels (target for SMART).
func factSubject(host, kind string, target ...string) string {
	return bus.Subject(host, kind, target...)
}

// dirSize sums the files under dir.
func dirSize(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }
