package disk

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestScanOpenFixtures(t *testing.T) {
	cases := map[string][]ScanDevice{
		"scan-nvme-unraid.json": {{Name: "/dev/nvme0", InfoName: "/dev/nvme0", Type: "nvme", Protocol: "NVMe"}},
		"scan-megaraid.json": {
			{Name: "/dev/bus/0", InfoName: "/dev/bus/0 [megaraid_disk_00]", Type: "megaraid,0", Protocol: "SCSI"},
			{Name: "/dev/bus/0", InfoName: "/dev/bus/0 [megaraid_disk_01]", Type: "megaraid,1", Protocol: "SCSI"},
		},
		"scan-single-scsi-73.json": {{Name: "/dev/sda", InfoName: "/dev/sda", Type: "scsi", Protocol: "SCSI"}},
	}
	for file, want := range cases {
		f, err := os.Open(filepath.Join("../../testdata/smartctl", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ScanOpen(f)
		f.Close()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v\nwant %+v", file, got, err, want)
		}
	}
	f, err := os.Open("../../testdata/smartctl/scan-7disks-scsi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ScanOpen(f)
	if err != nil || len(got) != 7 || got[6].Name != "/dev/sdg" {
		t.Errorf("7 disks: %+v, %v", got, err)
	}
}

// Captured on the dev VM with smartctl 7.3 (Debian 7.3-1+b1): a machine
// with no SMART-capable disk prints no devices key at all.
const scanOpenNoDisks = `{"json_format_version":[1,0],"smartctl":{"version":[7,3],"svn_revision":"5338","platform_info":"x86_64-linux-6.18.44-fc-v669","build_info":"(local build)","argv":["smartctl","--scan-open","--json=c"],"exit_status":0}}`

func TestScanOpenEdges(t *testing.T) {
	got, err := ScanOpen(strings.NewReader(scanOpenNoDisks))
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("no disks: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "/dev/sda -d sat # /dev/sda [SAT], ATA device", `{"devices": [`, `{}`} {
		if _, err := ScanOpen(strings.NewReader(bad)); err == nil {
			t.Errorf("ScanOpen(%q): want an error", bad)
		}
	}
	// --scan-open marks devices it could not open (secondhand form; no
	// real capture available).
	got, err = ScanOpen(strings.NewReader(`{"smartctl":{"exit_status":0},"devices":[{"name":"/dev/sdc","info_name":"/dev/sdc","type":"scsi","protocol":"SCSI","open_error":"Unknown USB bridge [0x152d:0x0578 (0x0)]"}]}`))
	if err != nil || len(got) != 1 || !strings.Contains(got[0].OpenError, "Unknown USB bridge") {
		t.Errorf("open_error: %+v, %v", got, err)
	}
}

// TestScanOpenCaptured reads `smartctl --scan-open --json` captured in the
// QEMU VM: SCSI, SAT and NVMe devices side by side.
func TestScanOpenCaptured(t *testing.T) {
	f, err := os.Open("../../testdata/captured/zfs-2.3.2/a.smartctl-scan-open.json")
	if err != nil {
		t.Skipf("capture not present: %v", err)
	}
	defer f.Close()
	got, err := ScanOpen(f)
	if err != nil || len(got) != 8 {
		t.Fatalf("got %d devices, %v", len(got), err)
	}
	if got[3] != (ScanDevice{Name: "/dev/sdd", InfoName: "/dev/sdd [SAT]", Type: "sat", Protocol: "ATA"}) ||
		got[7] != (ScanDevice{Name: "/dev/nvme1", InfoName: "/dev/nvme1", Type: "nvme", Protocol: "NVMe"}) {
		t.Errorf("devices = %+v", got)
	}
}
