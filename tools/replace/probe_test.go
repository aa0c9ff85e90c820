package replace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
)

// fakeRunner records every command and answers from a function.
type fakeRunner struct {
	mu     sync.Mutex
	calls  [][]string
	answer func(argv []string) (execx.Result, error)
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) (execx.Result, error) {
	argv := append([]string{name}, args...)
	f.mu.Lock()
	f.calls = append(f.calls, argv)
	f.mu.Unlock()
	if f.answer == nil {
		return execx.Result{}, nil
	}
	return f.answer(argv)
}

func (f *fakeRunner) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, strings.Join(c, " "))
	}
	return out
}

func readProbe(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/probe", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probeRunner answers lsblk, blkid and wipefs from captured outputs; an
// empty blkid answer is its exit status 2, "nothing found".
func probeRunner(t *testing.T, lsblk, blkid, wipefs string) *fakeRunner {
	return &fakeRunner{answer: func(argv []string) (execx.Result, error) {
		switch argv[0] {
		case "lsblk":
			return execx.Result{Stdout: readProbe(t, lsblk)}, nil
		case "blkid":
			out := readProbe(t, blkid)
			if len(out) == 0 {
				return execx.Result{ExitCode: 2}, &execx.Error{Kind: execx.KindFailed, Command: strings.Join(argv, " "), ExitCode: 2}
			}
			return execx.Result{Stdout: out}, nil
		case "wipefs":
			return execx.Result{Stdout: readProbe(t, wipefs)}, nil
		}
		t.Fatalf("unexpected command %v", argv)
		return execx.Result{}, nil
	}}
}

func TestExecProbe(t *testing.T) {
	loop := disk.Identity{Kernel: "loop1"}
	cases := []struct {
		name                 string
		lsblk, blkid, wipefs string
		want                 Usage
	}{
		{"clean", "lsblk-clean.json", "blkid-clean.txt", "wipefs-clean.txt", Usage{Type: "loop"}},
		{"mbr with a mounted ext4 partition", "lsblk-mbr-ext4-mounted.json", "blkid-mbr.txt", "wipefs-mbr.txt",
			Usage{Type: "loop", Partitions: []string{"loop1p1"}, Mounts: []string{"/tmp/zw-mnt"},
				Signatures: []Signature{{Device: "/dev/loop1", Type: "dos"}}}},
		{"ext4 on the whole device", "lsblk-whole-ext4.json", "blkid-whole-ext4.txt", "wipefs-whole-ext4.txt",
			Usage{Type: "loop", Signatures: []Signature{{Device: "/dev/loop1", Type: "ext4"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := probeRunner(t, c.lsblk, c.blkid, c.wipefs)
			got, err := ExecProbe{Runner: r}.Usage(context.Background(), loop)
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != c.want.Type || !slices.Equal(got.Partitions, c.want.Partitions) ||
				!slices.Equal(got.Mounts, c.want.Mounts) || !slices.Equal(got.Signatures, c.want.Signatures) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
			want := []string{
				"lsblk -J -b -o NAME,TYPE,FSTYPE,SIZE,PKNAME,MOUNTPOINT -- /dev/loop1",
				"blkid -p -o export -- /dev/loop1",
				"wipefs -n -- /dev/loop1",
			}
			if !slices.Equal(r.commands(), want) {
				t.Errorf("commands %v", r.commands())
			}
		})
	}
}

func TestExecProbeFailsClosed(t *testing.T) {
	r := &fakeRunner{answer: func(argv []string) (execx.Result, error) {
		return execx.Result{}, &execx.Error{Kind: execx.KindMissing, Command: argv[0]}
	}}
	if _, err := (ExecProbe{Runner: r}).Usage(context.Background(), disk.Identity{Kernel: "sdb"}); err == nil {
		t.Error("a missing lsblk was not an error")
	}
}

// Before util-linux 2.33 lsblk -J printed every value as a string.
func TestParseLsblkOldStringSizes(t *testing.T) {
	old := `{"blockdevices": [
	  {"name": "sdb", "type": "disk", "fstype": null, "size": "4000787030016", "pkname": null, "mountpoint": null,
	   "children": [
	     {"name": "sdb1", "type": "part", "fstype": "zfs_member", "size": "4000776716288", "pkname": "sdb", "mountpoint": null},
	     {"name": "sdb9", "type": "part", "fstype": null, "size": "8388608", "pkname": "sdb", "mountpoint": null},
	     {"name": "md127", "type": "raid1", "fstype": null, "size": "8388608", "pkname": "sdb", "mountpoint": null}
	   ]}
	]}`
	u, err := ParseLsblk([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if u.Type != "disk" || !slices.Equal(u.Partitions, []string{"sdb1", "sdb9"}) || !slices.Equal(u.Holders, []string{"md127 (raid1)"}) ||
		len(u.Signatures) != 1 || u.Signatures[0].Type != "zfs_member" {
		t.Errorf("got %+v", u)
	}
}

func TestParseWipefsOldLayout(t *testing.T) {
	// util-linux 2.2x printed an "offset type" list with a rule.
	old := "offset               type\n----------------------------------------------------------------\n0x438                ext4   [filesystem]\n                     LABEL: data\n                     UUID:  8972dca5-e99a-4592-9e4b-146c1519181a\n"
	got := ParseWipefs([]byte(old), "/dev/sdb")
	if len(got) != 1 || got[0].Type != "ext4" {
		t.Errorf("got %+v", got)
	}
}
