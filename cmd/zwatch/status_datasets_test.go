package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/testutil"
)

// standInTools writes zpool and zfs stand-ins that print real OpenZFS 2.3.2
// captures: zpool status of step a, and the given datasets and snapshots
// listings of step k (pools nas, backup, offsite).
func standInTools(t *testing.T, datasets, snapshots string) string {
	t.Helper()
	cfgDir := t.TempDir()
	dir := filepath.Join(cfgDir, "tools")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs := func(f string) string {
		p, err := filepath.Abs(captured + f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	testutil.WriteScript(t, dir, "zpool", fmt.Sprintf(`#!/bin/sh
case "$*" in
"status -j"*) exec cat %s ;;
"status"*) exec cat %s ;;
esac
echo "stand-in zpool: unexpected $*" >&2; exit 2
`, abs("a.zpool-status-j.json"), abs("a.zpool-status-p-P.txt")))
	testutil.WriteScript(t, dir, "zfs", fmt.Sprintf(`#!/bin/sh
case "$*" in
"list -Hp -t filesystem,volume "*) exec cat %s ;;
"list -Hp -t snapshot "*) exec cat %s ;;
esac
echo "stand-in zfs: unexpected $*" >&2; exit 2
`, abs(datasets), abs(snapshots)))
	cfg := filepath.Join(cfgDir, "zwatch.yaml")
	text := fmt.Sprintf("host: nas1\nstate_dir: %s\nzfs:\n  zpool: %s/zpool\n  zfs: %s/zfs\n", t.TempDir(), dir, dir)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Live `zwatch status` judges the datasets and snapshots with the rules the
// daemon runs: on the real listing of a locked encryption root it shows
// DatasetLocked under its pool and exits 1; the JSON form carries the same.
func TestStatusShowsLockedDatasets(t *testing.T) {
	cfg := standInTools(t, "k4-locked.zfs-list-datasets.txt", "k1-healthy.zfs-list-snapshots.txt")
	out, errOut, code := run(t, "-c", cfg, "status")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d (a locked dataset is a problem); stderr %s\n%s", code, exitFailure, errOut, out)
	}
	for _, want := range []string{
		"pool nas (listed by zfs list, not by zpool status)",
		"nas/secret", "DatasetLocked",
		"nas/vault",
		"snapshots: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	jsonOut, _, _ := run(t, "-c", cfg, "status", "--json")
	var r statusReport
	if err := json.Unmarshal([]byte(jsonOut), &r); err != nil {
		t.Fatalf("JSON: %v\n%s", err, jsonOut)
	}
	var nas *poolDatasets
	for i := range r.Datasets {
		if r.Datasets[i].Pool == "nas" {
			nas = &r.Datasets[i]
		}
	}
	if nas == nil || nas.Datasets != 15 || nas.Snapshots.Count == 0 {
		t.Fatalf("JSON datasets of nas = %+v", nas)
	}
	locked := map[string]bool{}
	for _, p := range nas.Problems {
		if p.Alert == "DatasetLocked" {
			locked[p.Dataset] = true
		}
	}
	if !locked["nas/secret"] || !locked["nas/vault"] {
		t.Errorf("locked datasets = %v, want nas/secret and nas/vault", locked)
	}
}

// A zfs list that fails is "datasets: unknown" and a problem, never a
// silent "all fine".
func TestStatusDatasetsUnreadable(t *testing.T) {
	cfg := standInTools(t, "k4-locked.zfs-list-datasets.txt", "k1-healthy.zfs-list-snapshots.txt")
	// A broken zfs: every call fails.
	testutil.WriteScript(t, filepath.Join(filepath.Dir(cfg), "tools"), "zfs", "#!/bin/sh\necho 'internal error: out of memory' >&2\nexit 1\n")
	out, _, code := run(t, "-c", cfg, "status")
	if code != exitFailure || !strings.Contains(out, "datasets: unknown: ") {
		t.Fatalf("exit %d, want %d and datasets: unknown:\n%s", code, exitFailure, out)
	}
}

func TestDescribeSnapshots(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := now.Add(-26 * time.Hour)
	got := describeSnapshots(snapshotsOverview{Count: 1234, Datasets: 5, UsedBytes: 3 << 30, Newest: "tank/a@autosnap_x_daily", NewestAt: &at}, now)
	if want := "1234 on 5 dataset(s), holding 3.0 GiB; newest tank/a@autosnap_x_daily (1d2h ago)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var b bytes.Buffer
	renderPoolDatasets(&b, &poolDatasets{Pool: "tank", Datasets: 3}, now)
	if !strings.Contains(b.String(), "datasets: 3, none locked") || !strings.Contains(b.String(), "snapshots: none") {
		t.Errorf("healthy pool:\n%s", b.String())
	}
}
