package replace

import (
	"strings"
	"testing"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
)

// guideCase builds an alert from a real zpool status output the way the
// rule engine would, and renders its guide.
type guideCase struct {
	name    string // golden file under testdata/guides/
	fixture string
	leaf    string // the leaf as zpool prints it
	disk    *disk.Identity
	opts    GuideOptions
	// replace is the exact zpool replace command the guide must give.
	replace string
	offline string // the zpool offline command, "" when the guide must not offer one
}

var guideCases = []guideCase{
	{
		// GUID/was case with a whole-disk by-id -part1 path: the GUID must be
		// used (".../X-part1" would not match; zpool appends -part1 itself)
		// and the new disk is given whole.
		name: "guid-was-byid-part1", fixture: "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt",
		leaf:    "6544112441320430488",
		replace: "zpool replace tresor1 6544112441320430488 /dev/disk/by-id/<new-disk-id>",
	},
	{
		// The same, with the new disk chosen (as zwatch replace renders it):
		// the command the owner really ran, as the real resilvering output
		// shows.
		name: "guid-was-byid-part1-new-chosen", fixture: "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt",
		leaf: "6544112441320430488", opts: GuideOptions{New: &tresorNew, Ledctl: true},
		replace: "zpool replace tresor1 6544112441320430488 /dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV",
	},
	{
		// by-id case: FAULTED but attached, free port unknown: the guide
		// explains both ways and offers the offline command for the second.
		name: "byid-faulted-present", fixture: "openzfs-2.x-mirror-faulted-too-many-errors-truncated.txt",
		leaf: "ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104", disk: &tresorOld, opts: GuideOptions{Ledctl: true},
		replace: "zpool replace tresor1 ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104 /dev/disk/by-id/<new-disk-id>",
		offline: "zpool offline tresor1 ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104",
	},
	{
		// sdX case: a pool imported by kernel names, a disk with a write
		// error but ONLINE, and a free bay: replace in place, no offline.
		name: "sdx-online-errors-free-bay", fixture: "linux-truenas-raidz2-write-error-9P-tabs.txt",
		leaf: "sda", opts: GuideOptions{FreeBay: BayFree},
		disk: &disk.Identity{Serial: "ZL2PQ8XH", Model: "ST8000VN004-2M2101", ByID: "/dev/disk/by-id/ata-ST8000VN004-2M2101_ZL2PQ8XH",
			Kernel: "sda", SizeBytes: 8001563222016, LogicalSector: 512, PhysicalSector: 4096},
		replace: "zpool replace tank sda /dev/disk/by-id/<new-disk-id>",
	},
	{
		// No free bay: offline first.
		name: "raidz2-faulted-no-bay", fixture: "freebsd-raidz2-degraded-faulted-too-many-errors.txt",
		leaf: "gpt/usb0", opts: GuideOptions{FreeBay: BayNone},
		replace: "zpool replace upool gpt/usb0 <new-partition>",
		offline: "zpool offline upool gpt/usb0",
	},
	{
		// FreeBSD GUID/was with a hand-made partition (ada1p3).
		name: "guid-was-freebsd-partition", fixture: "freebsd-handbook-mirror-degraded-guid-unavail-2Q.txt",
		leaf:    "316502962686821739",
		replace: "zpool replace mypool 316502962686821739 <new-partition>",
	},
	{
		// REMOVED but listed by name (text output has no GUID for it): the
		// name is given, no offline.
		name: "removed-by-name", fixture: "freebsd-raidz1-degraded-removed.txt",
		leaf:    "gpt/usb1",
		replace: "zpool replace upool gpt/usb1 <new-partition>",
	},
}

func guideFor(t *testing.T, c guideCase) (alert.Alert, []Step, string) {
	t.Helper()
	p := loadPool(t, c.fixture)
	rep := ReplacementFor(p, leafByName(t, p, c.leaf), c.disk)
	a := alert.Alert{Name: "VdevFailing", Severity: alert.Critical, State: alert.Firing,
		Summary: "pool " + p.Name + ": " + c.leaf + " is " + rep.VdevState, Replacement: &rep}
	return a, GuideSteps(a, c.opts), GuideWith(a, c.opts)
}

func TestGuideGolden(t *testing.T) {
	for _, c := range guideCases {
		t.Run(c.name, func(t *testing.T) {
			_, steps, text := guideFor(t, c)
			golden(t, "guides/"+c.name+".txt", text)
			var replace, offline string
			for _, s := range steps {
				for _, cmd := range append([]string{s.Command}, s.More...) {
					switch {
					case strings.HasPrefix(cmd, "zpool replace "):
						replace = cmd
					case strings.HasPrefix(cmd, "zpool offline "):
						offline = cmd
					}
				}
			}
			if replace != c.replace {
				t.Errorf("replace command\n got %q\nwant %q", replace, c.replace)
			}
			if offline != c.offline {
				t.Errorf("offline command\n got %q\nwant %q", offline, c.offline)
			}
		})
	}
}

func TestGuideLedctlOnlyWhenPresentAndInstalled(t *testing.T) {
	c := guideCases[2] // by-id, attached
	_, _, with := guideFor(t, c)
	contains(t, with, "ledctl locate=/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104",
		"ledctl locate_off=/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104")
	c.opts.Ledctl = false
	if _, _, without := guideFor(t, c); strings.Contains(without, "ledctl locate=") {
		t.Error("ledctl command offered without ledctl")
	}
	gone := guideCases[1] // GUID case, Ledctl true but the disk is gone
	if _, _, text := guideFor(t, gone); strings.Contains(text, "ledctl locate=") {
		t.Error("ledctl command offered for a disk that is gone")
	}
}

func TestGuideIdentifiesGoneDiskFromByIDName(t *testing.T) {
	_, _, text := guideFor(t, guideCases[0])
	contains(t, text, "serial:  WD-WMC4N1768104", "model:   WDC WD30EFRX-68EUZN0",
		"by-id:   /dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104\n")
}

func TestGuideNoSpareMarginKeepsDiskAttached(t *testing.T) {
	// tank is raidz2 with sda ONLINE: pretend the vdev has no margin left.
	c := guideCases[3]
	c.opts.FreeBay = BayNone
	a, _, _ := guideFor(t, c)
	zero := 0
	a.Replacement.Margin = &zero
	for _, s := range GuideSteps(a, c.opts) {
		if strings.Contains(s.Command, "zpool offline") {
			t.Fatalf("offline offered with no margin left: %+v", s)
		}
	}
}

func TestGuideEmptyForNonDiskAlert(t *testing.T) {
	if g := Guide(alert.Alert{Name: "PoolCapacity"}); g != "" {
		t.Errorf("guide for an alert without replacement context: %q", g)
	}
}

func TestGuideQuotesHostileNames(t *testing.T) {
	rep := alert.Replacement{Pool: "tank", TopVdev: "mirror-0", VdevPath: "/dev/disk/by-vdev/bay 3 $(reboot)", VdevState: "FAULTED"}
	text := Guide(alert.Alert{Replacement: &rep})
	contains(t, text, "zpool replace tank 'bay 3 $(reboot)' /dev/disk/by-id/<new-disk-id>")
}

func TestShownName(t *testing.T) {
	for in, want := range map[string]string{
		"/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104-part1": "ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104",
		"/dev/sdc1":      "sdc",
		"/dev/nvme0n1p1": "nvme0n1",
		"/dev/ada1p3":    "ada1p3",
		"/dev/gpt/usb2":  "gpt/usb2",
		"/dev/disk/by-partuuid/ca1eb824-c371-491d-ac13-37637e35c683": "ca1eb824-c371-491d-ac13-37637e35c683",
		"sda":           "sda",
		"ata-X_Y-part2": "ata-X_Y-part2",
	} {
		if got := shownName(in); got != want {
			t.Errorf("shownName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMargin(t *testing.T) {
	for fixture, want := range map[string]map[string]int{
		"openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt": {"6544112441320430488": 0},
		"freebsd-raidz2-degraded-faulted-too-many-errors.txt":    {"gpt/usb0": 1},
		"linux-truenas-raidz2-write-error-9P-tabs.txt":           {"sda": 2},
	} {
		p := loadPool(t, fixture)
		for leaf, m := range want {
			r := ReplacementFor(p, leafByName(t, p, leaf), nil)
			if r.Margin == nil || *r.Margin != m {
				t.Errorf("%s %s: margin %v, want %d", fixture, leaf, r.Margin, m)
			}
		}
	}
}

// Sparse or odd replacement contexts still give a usable guide, never a panic.
func TestGuideSparseContexts(t *testing.T) {
	for _, r := range []alert.Replacement{
		{Pool: "tank", VdevGUID: "16031226974783295807", VdevState: "UNAVAIL"},
		{Pool: "tank", VdevPath: "16031226974783295807"},
		{Pool: "tank", Was: "/dev/sdc1", VdevState: "UNAVAIL"},
		{Pool: "tank", VdevPath: "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456-part1", VdevState: "DEGRADED"},
		{Pool: "tank", VdevPath: "sdb", VdevState: "OFFLINE"},
	} {
		text := Guide(alert.Alert{Replacement: &r})
		if !strings.Contains(text, "zpool replace tank ") || !strings.Contains(text, "zpool scrub tank") {
			t.Errorf("%+v: guide\n%s", r, text)
		}
	}
	r := alert.Replacement{Pool: "tank", VdevPath: "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456-part1", VdevState: "DEGRADED"}
	contains(t, Guide(alert.Alert{Replacement: &r}),
		"zpool replace tank nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456 /dev/disk/by-id/<new-disk-id>", "serial:  S467NX0M123456")
}
