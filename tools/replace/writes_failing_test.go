package replace

import (
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/alert"
)

// The page make e2e got while ZFS still called a pulled single disk ONLINE
// (VdevErrorRate: 14731 write errors, no read or checksum errors, no
// redundancy): its guide must first ask whether the disk is still there,
// not start with "keep the old disk connected".
func TestGuideAsksWhetherTheDiskIsAttached(t *testing.T) {
	zero := 0
	const dev = "/dev/disk/by-id/scsi-0SEAGATE_ST4000NM0035_ZWS0009-part1"
	a := alert.Alert{Name: "VdevErrorRate", Summary: "disk/by-id/scsi-0SEAGATE_ST4000NM0035_ZWS0009-part1 in hung: 14731 errors in 10m0s",
		Evidence:    map[string]string{"read": "0", "write": "14731", "cksum": "0", "state": "ONLINE", "top_vdev": dev},
		Replacement: &alert.Replacement{Pool: "hung", TopVdev: dev, VdevPath: dev, VdevState: "ONLINE", Margin: &zero}}
	steps := GuideSteps(a, GuideOptions{})
	if len(steps) == 0 || steps[0].Title != "Check that the disk is still attached" {
		t.Fatalf("first step %+v", steps)
	}
	for _, want := range []string{"14731 write errors", "dropped out", "reconnect it"} {
		if !strings.Contains(steps[0].Explanation, want) {
			t.Errorf("first step does not say %q: %s", want, steps[0].Explanation)
		}
	}
	if steps[0].Command != "ls -l /dev/disk/by-id/" || !strings.Contains(strings.Join(steps[0].More, "\n"), "zpool clear hung") {
		t.Errorf("commands %q %q", steps[0].Command, steps[0].More)
	}

	// Checksum errors on a raidz2 member with margin to spare: a worn
	// disk, replaced as before.
	two := 2
	b := a
	b.Evidence = map[string]string{"read": "0", "write": "0", "cksum": "209"}
	b.Replacement = &alert.Replacement{Pool: "vault", TopVdev: "raidz2-0", VdevPath: "/dev/disk/by-id/virtio-ZWV0002-part1", VdevState: "ONLINE", Margin: &two}
	if steps := GuideSteps(b, GuideOptions{}); len(steps) == 0 || steps[0].Title == "Check that the disk is still attached" {
		t.Errorf("a worn raidz2 disk asks whether it is attached: %+v", steps)
	}
	// A few write errors among many checksum errors: not a dropped disk.
	c := a
	c.Evidence = map[string]string{"read": "0", "write": "12", "cksum": "40"}
	if _, ok := writesFailing(c); ok {
		t.Error("12 write and 40 checksum errors read as a dropped disk")
	}
}
