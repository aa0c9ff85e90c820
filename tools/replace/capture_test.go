package replace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// captureDir holds real OpenZFS 2.3.2 output captured in a VM (see its README).
const captureDir = "../../testdata/captured/zfs-2.3.2"

// captureDisks builds the VM's disks from its captured `ls -l
// /dev/disk/by-id` and `lsblk -J -O`, and a probe answering from the
// latter: real names, serials, WWNs and partitions.
func captureDisks(t *testing.T) ([]disk.Identity, fakeProbe) {
	t.Helper()
	links := map[string][]string{} // kernel -> by-id names of the whole disk
	b, err := os.ReadFile(filepath.Join(captureDir, "a.ls-l-dev-disk-by-id.txt"))
	if err != nil {
		t.Skip("capture not present:", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 11 || strings.Contains(f[8], "-part") {
			continue
		}
		links[filepath.Base(f[10])] = append(links[filepath.Base(f[10])], "/dev/disk/by-id/"+f[8])
	}
	raw, err := os.ReadFile(filepath.Join(captureDir, "a.lsblk-J-O.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Blockdevices []map[string]any `json:"blockdevices"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []disk.Identity
	probe := fakeProbe{}
	for _, d := range doc.Blockdevices {
		name, _ := d["name"].(string)
		id := disk.Identity{Kernel: name, ByIDAll: links[name], SizeBytes: lsblkSize(t, d["size"]),
			LogicalSector: jsonInt(d["log-sec"]), PhysicalSector: jsonInt(d["phy-sec"])}
		id.Serial, _ = d["serial"].(string)
		id.Model, _ = d["model"].(string)
		if w, ok := d["wwn"].(string); ok && strings.HasPrefix(w, "0x") {
			id.WWN = w
		}
		slices.Sort(id.ByIDAll)
		for _, n := range id.ByIDAll { // prefer serial-bearing names, as disk.Discover does
			if !strings.HasPrefix(filepath.Base(n), "wwn-") && !strings.Contains(n, "nvme-nvme.") && !strings.HasPrefix(filepath.Base(n), "scsi-3") {
				id.ByID = n
				break
			}
		}
		if id.ByID == "" && len(id.ByIDAll) > 0 {
			id.ByID = id.ByIDAll[0]
		}
		ids = append(ids, id)
		one, _ := json.Marshal(map[string]any{"blockdevices": []any{d}})
		u, err := ParseLsblk(one)
		if err != nil {
			t.Fatal(err)
		}
		probe[name] = probeAnswer{u: u}
	}
	return ids, probe
}

func lsblkSize(t *testing.T, v any) uint64 {
	s, _ := v.(string)
	mult := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}[s[len(s)-1]]
	n, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || mult == 0 {
		t.Fatalf("size %q", s)
	}
	return uint64(n * mult)
}

func jsonInt(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// Against the real capture, in all three forms zpool prints names (short,
// -P full partition paths, -j JSON), exactly the disks in no pool and big
// enough are usable, and every pool member is recognised.
func TestCandidatesOnRealCapture(t *testing.T) {
	ids, probe := captureDisks(t)
	for _, form := range []string{"a.zpool-status.txt", "a.zpool-status-p-P.txt", "a.zpool-status-j.json"} {
		t.Run(form, func(t *testing.T) {
			f, err := os.Open(filepath.Join(captureDir, form))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			parse := zfs.ParseStatusText
			if strings.HasSuffix(form, ".json") {
				parse = zfs.ParseStatusJSON
			}
			pools, err := parse(f)
			if err != nil {
				t.Fatal(err)
			}
			vault, err := findPool(pools, "vault")
			if err != nil {
				t.Fatal(err)
			}
			leaf := vault.Vdevs[0].Children[4] // ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001
			tgt := TargetFor(vault, leaf, ids)
			if tgt.Old == nil || tgt.Old.Kernel != "sdd" || tgt.MinSize != 1<<30 {
				t.Fatalf("target %+v", tgt)
			}
			var usable, inPool, small, mounted []string
			for _, c := range Candidates(context.Background(), ids, pools, tgt, probe) {
				switch {
				case c.Usable:
					usable = append(usable, c.Disk.Kernel)
				case c.Reasons[0].Code == CodeInPool || c.Reasons[0].Code == CodeSameAsOld:
					inPool = append(inPool, c.Disk.Kernel)
				case c.Reasons[0].Code == CodeTooSmall:
					small = append(small, c.Disk.Kernel)
				case c.Reasons[0].Code == CodeMounted:
					mounted = append(mounted, c.Disk.Kernel)
				}
			}
			slices.Sort(usable)
			slices.Sort(inPool)
			slices.Sort(small)
			if want := []string{"sdc", "sdf", "vdd", "vdg"}; !slices.Equal(usable, want) {
				t.Errorf("usable %v, want %v", usable, want)
			}
			if want := []string{"nvme0n1", "nvme1n1", "sda", "sdb", "sdd", "sde", "vdb", "vdc"}; !slices.Equal(inPool, want) {
				t.Errorf("in pool %v, want %v", inPool, want)
			}
			if want := []string{"vde", "vdf"}; !slices.Equal(small, want) {
				t.Errorf("too small %v, want %v", small, want)
			}
			// vda is the VM's root disk: ext4 on the whole disk, mounted at /.
			if want := []string{"vda"}; !slices.Equal(mounted, want) {
				t.Errorf("mounted %v, want %v", mounted, want)
			}
			// The guide for that member names it as zpool status does.
			rep := ReplacementFor(vault, leaf, tgt.Old)
			if got := planFor(&rep).oldArg; got != "ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001" {
				t.Errorf("old device %q", got)
			}
		})
	}
}
