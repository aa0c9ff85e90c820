package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

func mkdirFile(full string) error {
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.WriteFile(full, nil, 0o600)
}

func TestParsePlanErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"bad layout", `
pool: vault
vdevs:
  - layout: raidz2
    disks: [sdb, sdc, sdd, sde]
  - layout: raidz4
    disks: [sdf, sdg, sdh, sdi]
`, []string{`vdevs[1].layout: "raidz4" is not a layout: use mirror, raidz1, raidz2 or raidz3`}},
		{"unknown key", `
pool: vault
vdev:
  - layout: mirror
`, []string{"vdev: unknown key (did you mean vdevs?)"}},
		{"nested unknown key", `
pool: vault
vdevs:
  - layout: mirror
    disk: [sdb, sdc]
`, []string{"vdevs[0].disk: unknown key (did you mean disks?)"}},
		{"wrong kind", `
pool: vault
vdevs:
  layout: mirror
`, []string{"vdevs: want a list (- item lines), found a mapping"}},
		{"property typo and value", `
pool: vault
vdevs: [{layout: mirror, disks: [sdb, sdc]}]
properties:
  compresion: lz4
  atime: maybe
datasets:
  - name: pictures
    properties: {recordsize: 3M}
`, []string{
			"properties.compresion: not a ZFS dataset property zwatch can set at creation (did you mean compression?)",
			`properties.atime: "maybe" is not a value of atime: use on, off`,
			`datasets[0].properties.recordsize: "3M" is not a block size: use a power of two from 512 to 16M`,
		}},
		{"pool name and disks", `
pool: mirror1
vdevs:
  - layout: raidz2
    disks: [sdb, sdc]
ashift: 9
`, []string{
			`pool: "mirror1" begins with "mirror"`,
			"vdevs[0].disks: raidz2 needs at least 3 disks, has 2",
			"ashift: 9 is below 12",
		}},
		{"mismatched replication", `
pool: vault
vdevs:
  - {layout: mirror, disks: [sdb, sdc]}
  - {layout: raidz1, disks: [sdd, sde, sdf]}
`, []string{"vdevs[1].layout: raidz1 differs from vdevs[0] (mirror)"}},
		{"datasets", `
pool: vault
vdevs: [{layout: mirror, disks: [sdb, sdc]}]
datasets:
  - name: media/photos
  - name: vault/x y
  - name: backup
    mountpoint: srv/backup
  - name: backup
`, []string{
			"datasets[0].name: parent vault/media is not listed before it",
			`datasets[1].name: "x y": each part may hold only`,
			`datasets[2].mountpoint: "srv/backup" must be an absolute, clean path`,
			`datasets[3].name: "backup" is already datasets[2]`,
		}},
		{"encryption", `
pool: vault
vdevs: [{layout: mirror, disks: [sdb, sdc]}]
encryption: {keyformat: hex, key_file: keys/vault.key}
properties: {encryption: "on"}
`, []string{
			`encryption.keyformat: "hex" is not a key format`,
			"properties.encryption: use the encryption: block",
		}},
		{"aux vdevs", `
pool: vault
vdevs: [{layout: mirror, disks: [sdb, sdc]}]
log: [{layout: raidz1, disks: [sdd, sde]}]
special: [{disks: [sdf, sdg]}]
`, []string{
			`log[0].layout: "raidz1" is not a layout here: use mirror, or disk for a single disk`,
			"special[0].layout: missing",
		}},
		{"empty", "", []string{"plan is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"plan must be a YAML mapping"}},
		{"duplicate key", "pool: a\npool: b\nvdevs: []\n", []string{"pool: given twice"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePlan(strings.NewReader(c.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParsePlanExample(t *testing.T) {
	p, err := LoadPlan(filepath.Join("..", "..", "configs", "provision.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Pool != "vault" || len(p.Vdevs) != 1 || p.Vdevs[0].Layout != LayoutRaidz2 || len(p.Datasets) != 3 || p.Encryption == nil {
		t.Errorf("example plan: %+v", p)
	}
	// A plan file and Steps agree on dataset names with or without the pool.
	if p.Datasets[0].Name != "pictures" {
		t.Errorf("dataset name %q not made relative", p.Datasets[0].Name)
	}
}

func TestPlanFromFlags(t *testing.T) {
	p, err := PlanFromFlags(Flags{Pool: "vault", Layout: "raidz", Disks: []string{"sdb", "sdc", "sdd"},
		Datasets: []string{"pictures:recordsize=1M,mountpoint=/srv/pictures", "backup:compression=zstd-1"}, Encrypt: true, Normalization: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Vdevs[0].Layout != LayoutRaidz1 || p.Datasets[0].Mountpoint != "/srv/pictures" || p.Properties["normalization"] != "formD" || p.Encryption.Keyformat != KeyRaw {
		t.Errorf("plan: %+v", p)
	}
	_, err = PlanFromFlags(Flags{Pool: "1x", Layout: "raidz4", Disks: []string{"sdb", "sdc"}, Properties: []string{"compression"}})
	for _, w := range []string{`--layout: "raidz4" is not a layout`, "--pool: \"1x\" must start with a letter", "-O compression: want property=value"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	_, err = PlanFromFlags(Flags{Pool: "v", Layout: "mirror", Disks: []string{"a", "b", "c"}, Vdevs: 2})
	if err == nil || !strings.Contains(err.Error(), "DISK arguments: 3 disks cannot be split into 2 vdevs") {
		t.Errorf("got %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"1M": 1 << 20, "128K": 128 << 10, "512": 512, "1.5G": 3 << 29, "4KiB": 4096, "16m": 16 << 20} {
		if got, ok := ParseSize(in); !ok || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"", "M", "1Q", "-1K", "1e9"} {
		if _, ok := ParseSize(bad); ok {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

// FuzzParsePlan: any input either fails with an error or yields a plan that
// validates again unchanged and renders commands without panicking.
func FuzzParsePlan(f *testing.F) {
	for _, name := range []string{"plans/raidz2-six.yaml", "plans/ssd-mirror-encrypted.yaml"} {
		if b, err := readTestdata(name); err == nil {
			f.Add(string(b))
		}
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", "configs", "provision.example.yaml")); err == nil {
		f.Add(string(b))
	}
	f.Add("pool: a\nvdevs: [{layout: raidz4, disks: [x]}]\n")
	f.Add("pool: &a x\nvdevs: *a\n")
	f.Add("pool: v\nvdevs: [{layout: mirror, disks: [a, b]}]\nlog: [{disks: [c]}]\ncache: [d]\nspares: [e]\ndatasets: [{name: a}, {name: a/b, properties: {recordsize: 1M}}]\n")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePlan(strings.NewReader(s))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if errs := p.Validate(); len(errs) > 0 {
			t.Fatalf("valid plan no longer validates: %v", errs)
		}
		creates := 0
		for _, st := range Steps(p) {
			_ = st.String()
			if st.CreatesPool {
				creates++
			}
		}
		if creates != 1 {
			t.Fatalf("%d zpool create steps", creates)
		}
		_ = SpaceTraps(p)
	})
}
