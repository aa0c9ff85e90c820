package provision

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/zwatch/zwatch/internal/execx"
)

// hostSpec is testdata/hosts/<name>/host.yaml: a constructed machine whose
// /dev/disk/by-id names come from real listings (by-id*.txt).
type hostSpec struct {
	Disks []struct {
		Kernel     string   `yaml:"kernel"`
		Sectors    uint64   `yaml:"sectors"`
		Logical    int      `yaml:"logical"`
		Physical   int      `yaml:"physical"`
		Rotational int      `yaml:"rotational"`
		ATA        int      `yaml:"ata"`
		USB        int      `yaml:"usb"`
		NVMe       *int     `yaml:"nvme"`
		Path       string   `yaml:"path"`
		Model      string   `yaml:"model"`
		Serial     string   `yaml:"serial"`
		Major      int      `yaml:"major"`
		Partitions []string `yaml:"partitions"`
		Holders    []string `yaml:"holders"`
	} `yaml:"disks"`
	Files    map[string]string `yaml:"files"`
	Commands []struct {
		Argv   string  `yaml:"argv"`
		File   string  `yaml:"file"`
		Stdout *string `yaml:"stdout"`
		Exit   int     `yaml:"exit"`
	} `yaml:"commands"`
}

// canned is one command's output in a fixture.
type canned struct {
	pattern string // argv joined by spaces; a trailing * matches any rest
	stdout  []byte
	exit    int
}

// fakeHost is a fixture tree plus canned command outputs. It records every
// command run and every file written, and can fail one command.
type fakeHost struct {
	root    string
	cmds    []canned
	mu      sync.Mutex
	calls   [][]string
	written map[string]writtenFile
	// failOn makes the command whose joined argv equals it exit 1.
	failOn     string
	failStderr string
}

type writtenFile struct {
	data []byte
	perm fs.FileMode
}

func (h *fakeHost) Root() string { return h.root }

func (h *fakeHost) ReadFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(h.root, name))
}

func (h *fakeHost) Run(ctx context.Context, argv []string) (execx.Result, error) {
	h.mu.Lock()
	h.calls = append(h.calls, append([]string(nil), argv...))
	h.mu.Unlock()
	joined := strings.Join(argv, " ")
	if h.failOn != "" && joined == h.failOn {
		return execx.Result{ExitCode: 1, Stderr: []byte(h.failStderr)},
			&execx.Error{Kind: execx.KindFailed, Command: joined, ExitCode: 1, Stderr: h.failStderr, Err: fmt.Errorf("exit status 1")}
	}
	for _, c := range h.cmds {
		if c.pattern == joined || (strings.HasSuffix(c.pattern, "*") && strings.HasPrefix(joined, strings.TrimSuffix(c.pattern, "*"))) {
			res := execx.Result{Stdout: c.stdout, ExitCode: c.exit}
			if c.exit != 0 {
				return res, &execx.Error{Kind: execx.KindFailed, Command: joined, ExitCode: c.exit, Err: fmt.Errorf("exit status %d", c.exit)}
			}
			return res, nil
		}
	}
	return execx.Result{}, &execx.Error{Kind: execx.KindMissing, Command: joined, Err: fmt.Errorf("no canned output for %q", joined)}
}

func (h *fakeHost) WriteFile(name string, data []byte, perm fs.FileMode) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.written[name]; ok || exists(h, name) {
		return fmt.Errorf("%s exists", name)
	}
	h.written[name] = writtenFile{data: append([]byte(nil), data...), perm: perm}
	return nil
}

// commands returns the recorded argv, without the read-only inspection
// commands (blkid, wipefs --no-act, smartctl, zdb, zpool list/status/get, zfs get).
func (h *fakeHost) changes() [][]string {
	var out [][]string
	for _, c := range h.calls {
		j := strings.Join(c, " ")
		switch {
		case strings.HasPrefix(j, "blkid "), strings.HasPrefix(j, "wipefs --no-act"), strings.HasPrefix(j, "smartctl "),
			strings.HasPrefix(j, "zdb "), strings.HasPrefix(j, "zpool list"), strings.HasPrefix(j, "zpool status"),
			strings.HasPrefix(j, "zfs get"), strings.HasPrefix(j, "zpool get"):
			continue
		}
		out = append(out, c)
	}
	return out
}

var reLink = regexp.MustCompile(`([A-Za-z0-9][^\s│├└─'` + "`" + `]*) -> (\.\./\.\./[A-Za-z0-9]+)`)

// loadHost builds testdata/hosts/<name> into a temporary tree.
func loadHost(t testing.TB, name string) *fakeHost {
	t.Helper()
	dir := filepath.Join("testdata", "hosts", name)
	raw, err := os.ReadFile(filepath.Join(dir, "host.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var spec hostSpec
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("%s/host.yaml: %v", dir, err)
	}
	root := t.TempDir()
	mk := func(p string, content string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(p, target string) {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range spec.Disks {
		path := d.Path
		hostN := 0
		switch {
		case path != "":
		case d.NVMe != nil:
			path = fmt.Sprintf("../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme%d/%s", *d.NVMe, d.Kernel)
		case d.USB > 0:
			hostN = d.USB - 1
			path = fmt.Sprintf("../devices/platform/soc/3f980000.usb/usb1/1-1/1-1.%d/1-1.%d:1.0/host%d/target%d:0:0/%d:0:0:0/block/%s", d.USB+1, d.USB+1, hostN, hostN, hostN, d.Kernel)
		default:
			hostN = d.ATA - 1
			path = fmt.Sprintf("../devices/pci0000:00/0000:00:17.0/ata%d/host%d/target%d:0:0/%d:0:0:0/block/%s", d.ATA, hostN, hostN, hostN, d.Kernel)
		}
		link("sys/block/"+d.Kernel, path)
		sys := filepath.Join("sys/block", filepath.Dir(path), d.Kernel) // sys/devices/.../block/<k>
		sys = filepath.Clean(sys)
		mk(sys+"/size", fmt.Sprintf("%d\n", d.Sectors))
		mk(sys+"/queue/logical_block_size", fmt.Sprintf("%d\n", d.Logical))
		mk(sys+"/queue/physical_block_size", fmt.Sprintf("%d\n", d.Physical))
		mk(sys+"/queue/rotational", fmt.Sprintf("%d\n", d.Rotational))
		mk(sys+"/removable", "0\n")
		major, minor := devNumber(d.Kernel, d.Major)
		mk(sys+"/dev", fmt.Sprintf("%d:%d\n", major, minor))
		// device: the SCSI device (or NVMe controller) directory
		devDir := filepath.Dir(filepath.Dir(sys))
		link(sys+"/device", "../../../"+filepath.Base(devDir))
		if d.Model != "" {
			mk(devDir+"/model", d.Model+"\n")
		}
		if d.Serial != "" {
			mk(devDir+"/serial", d.Serial+"\n")
		}
		mk("dev/"+d.Kernel, "")
		for _, h := range d.Holders {
			mk(sys+"/holders/"+h, "")
		}
		for _, p := range d.Partitions {
			n, _ := strconv.Atoi(reTrailingNum.FindString(p))
			mk(sys+"/"+p+"/partition", fmt.Sprintf("%d\n", n))
			mk(sys+"/"+p+"/dev", fmt.Sprintf("%d:%d\n", major, minor+n))
			mk("dev/"+p, "")
		}
	}
	byid, _ := filepath.Glob(filepath.Join(dir, "by-id*.txt"))
	for _, f := range byid {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			if m := reLink.FindStringSubmatch(l); m != nil {
				link("dev/disk/by-id/"+m[1], m[2])
			}
		}
	}
	for dst, src := range spec.Files {
		b, err := os.ReadFile(filepath.Join(dir, src))
		if err != nil {
			t.Fatal(err)
		}
		mk(dst, string(b))
	}
	h := &fakeHost{root: root, written: map[string]writtenFile{}}
	for _, c := range spec.Commands {
		cn := canned{pattern: c.Argv, exit: c.Exit}
		switch {
		case c.File != "":
			b, err := os.ReadFile(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			cn.stdout = b
		case c.Stdout != nil:
			cn.stdout = []byte(*c.Stdout)
		}
		h.cmds = append(h.cmds, cn)
	}
	return h
}

// devNumber is the kernel's major:minor for a disk name.
func devNumber(kernel string, major int) (int, int) {
	switch {
	case strings.HasPrefix(kernel, "sd"):
		idx := 0
		for _, c := range strings.TrimPrefix(kernel, "sd") {
			idx = idx*26 + int(c-'a'+1)
		}
		idx--
		if idx < 16 {
			return 8, idx * 16
		}
		return 65 + (idx-16)/16, ((idx - 16) % 16) * 16
	case strings.HasPrefix(kernel, "nvme"):
		return 259, 0
	}
	if major == 0 {
		major = 179
	}
	return major, 0
}

func joinAll(argvs [][]string) []string {
	out := make([]string, len(argvs))
	for i, a := range argvs {
		out[i] = strings.Join(a, " ")
	}
	return out
}

func TestFixtureDiscovery(t *testing.T) {
	h := loadHost(t, "hdidle-nas")
	in, err := Inspect(context.Background(), h, &Plan{Pool: "vault", Vdevs: []VdevSpec{{Layout: "mirror", Disks: []string{"sdc", "Z30147EP"}}}}, InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range in.Disks {
		got = append(got, fmt.Sprintf("%s %s %s %s %d %d/%d %s rot=%d", d.ID.Kernel, d.ID.ByID, d.ID.Model, d.ID.Serial, d.ID.SizeBytes, d.ID.LogicalSector, d.ID.PhysicalSector, d.ID.Transport, d.ID.RotationRPM))
	}
	sort.Strings(got)
	want := []string{
		"sdc /dev/disk/by-id/ata-ST4000VN000-1H4168_Z300P70F ST4000VN000-1H4168 Z300P70F 4000787030016 512/4096 sata rot=-1",
		"sdg /dev/disk/by-id/ata-ST4000VN000-1H4168_Z30147EP ST4000VN000-1H4168 Z30147EP 4000787030016 512/4096 sata rot=-1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("disks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
