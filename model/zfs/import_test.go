package zfs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func parseImportFixture(t *testing.T, dir, name string) []ImportablePool {
	t.Helper()
	pools, err := ParseImport(openFixture(t, dir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return pools
}

// The two real OpenZFS 2.3.2 captures: the exported DEGRADED pool with one
// disk gone, then with a second one gone while exported.
func TestImportCaptured(t *testing.T) {
	cases := []struct {
		file    string
		missing []string
	}{
		{"c2-exported.zpool-import.txt", []string{"scsi-35000c500a0000001"}},
		{"c4-missing.zpool-import.txt", []string{"scsi-35000c500a0000001", "wwn-0x5000c500a0000002"}},
	}
	for _, c := range cases {
		pools := parseImportFixture(t, "captured/zfs-2.3.2", c.file)
		if len(pools) != 1 {
			t.Fatalf("%s: %d pools", c.file, len(pools))
		}
		p := pools[0]
		if p.Name != "vault" || p.ID != "4831632425058079330" || p.State != StateDegraded || p.Devices != 6 {
			t.Errorf("%s: %+v", c.file, p)
		}
		if !strings.HasPrefix(p.Status, "One or more devices contains corrupted data") ||
			!strings.Contains(p.Action, "can be imported despite missing or damaged devices. The fault tolerance") {
			t.Errorf("%s: status %q action %q", c.file, p.Status, p.Action)
		}
		if !reflect.DeepEqual(p.Missing, c.missing) {
			t.Errorf("%s: missing %q, want %q", c.file, p.Missing, c.missing)
		}
		if len(p.Notes) != 0 {
			t.Errorf("%s: notes %q", c.file, p.Notes)
		}
	}
}

// Public real outputs (testdata/zpool-import/README.md says where each
// comes from): ZoL 0.6 with tabs, 0.8 and 2.0 with blanks, illumos.
func TestImportPublic(t *testing.T) {
	cases := []struct {
		file, name, id, state string
		devices               int
		missing               []string
	}{
		{"zol-0.6-issue-2450-d-by-id-mirror-unavail.txt", "tank", "3589532515861118860", StateUnavail, 4,
			[]string{"ata-INTEL_SSDSC2BB800G4_BTWL413204Z7800RGN", "ata-INTEL_SSDSC2BB800G4_BTWL413106AN800RGN"}},
		{"zol-0.6-issue-3145-guid-named-device.txt", "tank", "5884798594334896503", StateUnavail, 2,
			[]string{"1620547016084460107", "ata-HGST_HUS724030ALA640_PN2234P8KKY91Y"}},
		{"zol-0.6-issue-3024-raidz-unavail.txt", "storage", "15495756392794434226", StateUnavail, 7,
			[]string{"ata-ST3000DM001-1CH166_Z1F1PYM6", "ata-ST3000DM001-1CH166_W1F2372R", "ata-ST3000DM001-1CH166_W1F24BTK"}},
		{"zol-0.8.4-issue-11447-faulted-indirect-spaces.txt", "zfs", "500727213717931933", StateFaulted, 6,
			[]string{"vdf"}},
		{"openzfs-2.0.3-issue-11960-file-vdev-online.txt", "testpsko", "11983299557685846606", StateOnline, 1, nil},
		{"zol-0.6-issue-3089-missing-top-level-additional-devices.txt", "data", "13401730686227579694", StateUnavail, 5, nil},
	}
	for _, c := range cases {
		pools := parseImportFixture(t, "zpool-import", c.file)
		if len(pools) != 1 {
			t.Fatalf("%s: %d pools", c.file, len(pools))
		}
		p := pools[0]
		if p.Name != c.name || p.ID != c.id || p.State != c.state || p.Devices != c.devices {
			t.Errorf("%s: %s %s %s %d devices", c.file, p.Name, p.ID, p.State, p.Devices)
		}
		if !reflect.DeepEqual(p.Missing, c.missing) {
			t.Errorf("%s: missing %q, want %q", c.file, p.Missing, c.missing)
		}
	}
}

func TestImportMissingTopLevelNote(t *testing.T) {
	p := parseImportFixture(t, "zpool-import", "zol-0.6-issue-3089-missing-top-level-additional-devices.txt")[0]
	want := []string{"Additional devices are known to be part of this pool, though their exact configuration cannot be determined."}
	if !reflect.DeepEqual(p.Notes, want) {
		t.Errorf("notes %q", p.Notes)
	}
	if p.Action != "The pool cannot be imported. Attach the missing devices and try again." {
		t.Errorf("action %q", p.Action)
	}
}

func TestImportTwoPoolsSameName(t *testing.T) {
	pools := parseImportFixture(t, "zpool-import", "solaris-admin-guide-two-pools-same-name.txt")
	if len(pools) != 2 || pools[0].Name != "dozer" || pools[1].Name != "dozer" ||
		pools[0].ID != "2704475622193776801" || pools[1].ID != "6223921996155991199" {
		t.Fatalf("pools %+v", pools)
	}
}

func TestImportNothing(t *testing.T) {
	for _, in := range []string{"", "\n", "no pools available to import\n"} {
		pools, err := ParseImport(strings.NewReader(in))
		if err != nil || pools != nil {
			t.Errorf("%q: %v, %v", in, pools, err)
		}
	}
}

func TestImportNotImport(t *testing.T) {
	status := openFixture(t, "captured/zfs-2.3.2", "a.zpool-status.txt")
	if _, err := ParseImport(status); !errors.Is(err, ErrNotImport) || !strings.Contains(err.Error(), "no id: line") {
		t.Errorf("zpool status read as import: %v", err)
	}
	if _, err := ParseImport(strings.NewReader("cannot import 'tank': no such pool available\n")); !errors.Is(err, ErrNotImport) {
		t.Errorf("an error message read as import: %v", err)
	}
}

// Every zpool import capture of step k (OpenZFS 2.3.2): pools found,
// "no pools available to import" (empty stdout), and -c's retry message.
func TestImportCapturedStepK(t *testing.T) {
	cases := []struct {
		file    string
		pools   int
		state   string
		missing []string
	}{
		{"k7-none.zpool-import.txt", 0, "", nil},
		{"k7-none.zpool-import-c.txt", 0, "", nil},
		{"k7-exported.zpool-import.txt", 1, StateOnline, nil},
		{"k7-exported.zpool-import-c.txt", 0, "", nil},
		{"k7-exported.zpool-import-c-before-export.txt", 1, StateOnline, nil},
		{"k7-missing.zpool-import.txt", 1, StateDegraded, []string{"wwn-0x5000c500a0000002"}},
		{"k7-missing.zpool-import-c-before-export.txt", 1, StateDegraded, []string{"wwn-0x5000c500a0000002"}},
		{"k7-both-missing.zpool-import.txt", 0, "", nil},
		{"k7-both-missing.zpool-import-c-before-export.txt", 0, "", nil},
		{"k7-both-missing.zpool-import-offsite.txt", 0, "", nil},
		{"k7-replugged.zpool-import.txt", 1, StateOnline, nil},
		{"k7-imported.zpool-import-c.txt", 0, "", nil},
	}
	for _, c := range cases {
		pools := parseImportFixture(t, "captured/zfs-2.3.2", c.file)
		if len(pools) != c.pools {
			t.Fatalf("%s: %d pools %+v", c.file, len(pools), pools)
		}
		if c.pools == 0 {
			continue
		}
		p := pools[0]
		if p.Name != "offsite" || p.ID != "10285672623992423223" || p.State != c.state || p.Devices != 2 ||
			!reflect.DeepEqual(p.Missing, c.missing) {
			t.Errorf("%s: %+v", c.file, p)
		}
	}
}
