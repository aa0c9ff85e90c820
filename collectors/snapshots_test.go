package collectors

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/zfs"
)

const snapshotsArgv = "list -Hp -t snapshot -o name,creation,used -s creation"

func readSnapshots(t *testing.T, c *Snapshots) facts.SnapshotsData {
	t.Helper()
	return collectOnce[facts.SnapshotsData](t, c, facts.Snapshots.Name())
}

func statsOf(d facts.SnapshotsData, dataset string) zfs.SnapshotStats {
	for _, s := range d.Datasets {
		if s.Dataset == dataset {
			return s
		}
	}
	return zfs.SnapshotStats{}
}

// Step k1 on real 2.3.2: snapshots named as sanoid, zfs-auto-snapshot,
// TrueNAS, zrepl and pyznap name them.
func TestSnapshotsSummedUpFromTheRealListing(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(snapshotsArgv, captured+"k1-healthy.zfs-list-snapshots.txt", "", 0)
	d := readSnapshots(t, &Snapshots{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool})
	if d.Total != 49 {
		t.Fatalf("total %d, want the 49 lines", d.Total)
	}
	sum := 0
	for _, s := range d.Datasets {
		sum += s.Count
	}
	if sum != d.Total {
		t.Fatalf("counts sum to %d, total %d", sum, d.Total)
	}
	for dataset, tool := range map[string]string{"nas/media": "sanoid", "nas/secret": "zfs-auto-snapshot", "nas/quota": "zrepl", "nas/vault": "pyznap", "nas/My Documents": "truenas"} {
		s := statsOf(d, dataset)
		if s.Scheme == nil || s.Scheme.Tool != tool || s.Newest.IsZero() {
			t.Errorf("%s: %+v scheme %+v, want tool %s", dataset, s, s.Scheme, tool)
		}
	}
}

// No snapshots at all: zfs prints nothing on stdout. An empty summary, not
// an error.
func TestSnapshotsNone(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(snapshotsArgv, "", "", 0)
	d := readSnapshots(t, &Snapshots{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool})
	if d.Total != 0 || d.Datasets == nil || len(d.Datasets) != 0 {
		t.Fatalf("got %+v", d)
	}
}

// A snapshot destroyed while zfs lists: exit 1, "dataset does not exist"
// (the real message of k2-nonexistent); the lines printed are kept. The
// stdout here is k1's listing, as zfs still prints the others.
func TestSnapshotsKeepTheLinesWhenOneVanishes(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(snapshotsArgv, captured+"k1-healthy.zfs-list-snapshots.txt", stderrOf(t, "k2-nonexistent.zfs-list-snapshots.txt"), 1)
	c := &Snapshots{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool}
	if d := readSnapshots(t, c); d.Total != 49 {
		t.Fatalf("total %d", d.Total)
	}
	zfsCmd.answer(snapshotsArgv, captured+"k1-healthy.zfs-list-snapshots.txt", "internal error: Invalid argument\n", 1)
	if _, err := c.Read(context.Background()); execx.KindOf(err) != execx.KindFailed {
		t.Fatalf("err %v", err)
	}
}

func TestSnapshotsBadOutputIsAParseError(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	// Another command's real output where a snapshot listing was expected.
	zfsCmd.answer(snapshotsArgv, captured+"k1-healthy.zfs-list-datasets.txt", "", 0)
	_, err := (&Snapshots{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool}).Read(context.Background())
	if ce := ErrorFor("snapshots", "", err); ce.Kind != facts.KindParse {
		t.Fatalf("err %v -> %+v", err, ce)
	}
}

func TestSnapshotsHungZfsIsATimeout(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(snapshotsArgv, "HANG", "", 0)
	c := &Snapshots{Runner: execx.New(300 * time.Millisecond), Zfs: zfsCmd.Tool}
	start := time.Now()
	err := c.Collect(context.Background(), &memPublisher{})
	if execx.KindOf(err) != execx.KindTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

// 50,000 snapshots are streamed through: a stand-in prints the real k1
// listing's lines over and over (DERIVED: each copy's names get a suffix,
// so that they stay distinct) until 50,000 lines.
func TestSnapshotsFiftyThousandStreamed(t *testing.T) {
	abs, err := filepath.Abs(captured + "k1-healthy.zfs-list-snapshots.txt")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tool := testutil.WriteScript(t, dir, "zfs", fmt.Sprintf(`#!/bin/sh
[ "$*" = %q ] || exit 2
awk -F '\t' 'BEGIN { OFS = "\t" } { line[NR] = $0 } END {
	for (i = 0; i < 50000; i++) { split(line[i %% NR + 1], f, "\t"); print f[1] "-" int(i / NR), f[2], f[3] }
}' %q
`, snapshotsArgv, abs))
	start := time.Now()
	d := readSnapshots(t, &Snapshots{Runner: execx.New(30 * time.Second), Zfs: tool})
	if d.Total != 50000 {
		t.Fatalf("total %d", d.Total)
	}
	if n := len(d.Datasets); n == 0 || n > 20 {
		t.Fatalf("%d datasets", n)
	}
	t.Logf("50,000 snapshots in %s", time.Since(start).Round(time.Millisecond))
}

// The snapshot listing is slow on a big box, not hung: its runner waits
// half the snapshot interval when that is longer than the command timeout.
func TestSnapshotsTimeoutFromTheTable(t *testing.T) {
	cfg := config.Default()
	env := Env{Config: &cfg, Runner: execx.New(0), Log: discard(), Poke: func(string) func() { return func() {} }}
	for _, s := range Table() {
		if s.Name != "snapshots" {
			continue
		}
		r := s.Poll(env).(*Snapshots).Runner.(*execx.Runner)
		if r.Timeout != 7*time.Minute+30*time.Second {
			t.Fatalf("timeout %s, want half of the 15m interval", r.Timeout)
		}
		cfg.ZFS.SnapshotsInterval = config.Duration(20 * time.Second)
		if r := s.Poll(env).(*Snapshots).Runner.(*execx.Runner); r.Timeout != cfg.ZFS.CommandTimeout.D() {
			t.Fatalf("timeout %s, want the command timeout", r.Timeout)
		}
		return
	}
	t.Fatal("no snapshots line in the table")
}
