package rules

import (
	"slices"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
)

// rules eval reads the datasets collector's zfs list, the snapshot listing
// and zpool import, detected by content, in the real step c and k captures.
func TestEvalReadsDatasetsSnapshotsImport(t *testing.T) {
	d := "../testdata/" + cap232
	now := k1Time(t)
	cases := []struct {
		files []string
		want  []string
	}{
		{[]string{d + "k4-locked.zfs-list-datasets.txt"}, []string{
			"DatasetLocked critical dataset=nas/secret pool=nas", "DatasetLocked critical dataset=nas/vault pool=nas",
			"DatasetLocked warning dataset=nas/archive pool=nas",
			"ReplicationInterrupted warning dataset=backup/media pool=backup"}},
		{[]string{d + "k1-healthy.zfs-list-snapshots.txt"}, []string{
			"SnapshotStale warning dataset=nas/My Documents pool=nas", "SnapshotStale warning dataset=nas/media pool=nas",
			"SnapshotStale warning dataset=nas/quota pool=nas", "SnapshotStale warning dataset=nas/secret pool=nas",
			"SnapshotStale warning dataset=nas/secret/photos pool=nas", "SnapshotStale warning dataset=nas/vault pool=nas",
			"SnapshotStale warning dataset=nas/vol pool=nas"}},
		{[]string{d + "b1-offline.zpool-status.txt", d + "c2-exported.zpool-import.txt"}, []string{
			"PoolMissing critical pool=vault", "PoolState warning pool=vault state=DEGRADED",
			"RedundancyMargin warning pool=vault vdev=raidz2-0", "ScrubNever warning pool=fast",
			"ScrubNever warning pool=vault", "VdevState warning pool=vault vdev=virtio-ZWV0001"}},
		// An import listing alone: nothing is known to be missing.
		{[]string{d + "k7-missing.zpool-import.txt"}, nil},
		{[]string{d + "k7-missing.zpool-import-c-before-export.txt"}, nil},
	}
	for _, tc := range cases {
		as, err := evalAt(tc.files, config.DefaultRules(), now)
		if err != nil {
			t.Fatalf("%v: %v", tc.files, err)
		}
		var got []string
		for _, a := range as {
			got = append(got, describe(a))
			if a.Labels["pool"] == "vault" && a.Name != namePoolMissing && !strings.HasSuffix(a.Summary, keptMark) {
				t.Errorf("%s of the exported vault not marked: %s", a.Name, a.Summary)
			}
		}
		slices.Sort(got)
		sameList(t, got, tc.want)
	}
}

// A saved `zfs list -Hp -o name,used,avail,quota,refquota` still raises
// DatasetQuota, now read from the datasets message (step a: vault/backup's
// 1 GiB quota and vault/storage's 512 MiB refquota are 4 % used, so only a
// low threshold speaks).
func TestEvalOldDatasetListFeedsQuota(t *testing.T) {
	cfg := config.DefaultRules()
	capacityConfig.edit(&cfg, func(c *capacitySettings) { c.QuotaWarning = 3 })
	as, err := evalAt([]string{"../testdata/" + cap232 + "a.zfs-list-Hp.txt"}, cfg, k1Time(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, describe(a))
	}
	slices.Sort(got)
	sameList(t, got, []string{"DatasetQuota warning dataset=vault/backup pool=vault", "DatasetQuota warning dataset=vault/storage pool=vault"})
}
