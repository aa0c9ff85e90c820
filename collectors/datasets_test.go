package collectors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// datasetsArgv is the datasets collector's zfs argv with every column.
var datasetsArgv = "list -Hp -t filesystem,volume -o " + strings.Join(zfs.DatasetPropColumns, ",")

// machine is a stand-in for the guest's root filesystem of capture step k:
// its key files (/etc/zfs/keys) and mountpoint directories, made in a temp
// directory the collector is pointed at (Datasets.Root).
func machine(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	keys := filepath.Join(root, "etc/zfs/keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	// As step k made them: 32 random bytes (raw), 64 hex digits (hex).
	mustWrite(t, filepath.Join(keys, "secret.key"), strings.Repeat("\x9c", 32), 0o600)
	mustWrite(t, filepath.Join(keys, "archive.hex"), strings.Repeat("a1", 32)+"\n", 0o600)
	return root
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func readDatasets(t *testing.T, c *Datasets) facts.DatasetsData {
	t.Helper()
	return collectOnce[facts.DatasetsData](t, c, facts.Datasets.Name())
}

func byName(d facts.DatasetsData, name string) facts.DatasetState {
	for _, s := range d.Datasets {
		if s.Name == name {
			return s
		}
	}
	return facts.DatasetState{}
}

func TestDatasetsHealthy(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k1-healthy.zfs-list-datasets.txt", "", 0)
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: machine(t)}
	d := readDatasets(t, c)
	if len(d.Datasets) != 17 || len(d.Missing) != 0 {
		t.Fatalf("%d datasets, missing %v", len(d.Datasets), d.Missing)
	}
	secret := byName(d, "nas/secret")
	if secret.KeyFile == nil || secret.KeyFile.Path != "/etc/zfs/keys/secret.key" || secret.KeyFile.Problem != "" || secret.KeyFile.Mode != "0600" {
		t.Fatalf("nas/secret key file %+v", secret.KeyFile)
	}
	if archive := byName(d, "nas/archive"); archive.KeyFile == nil || archive.KeyFile.Problem != "" {
		t.Fatalf("nas/archive (hex) key file %+v", archive.KeyFile)
	}
	// Not an encryption root, a prompt, a volume: no key file to check.
	for _, name := range []string{"nas/secret/photos", "nas/vault", "nas/vol", "nas"} {
		if s := byName(d, name); s.KeyFile != nil {
			t.Errorf("%s: key file %+v", name, s.KeyFile)
		}
	}
	// Unmounted on purpose: legacy, none, canmount off/noauto; and volumes.
	for _, s := range d.Datasets {
		if s.Underneath != nil {
			t.Errorf("%s (canmount=%s mountpoint=%s mounted=%s) was looked under", s.Name, s.CanMount, s.Mountpoint, s.Mounted)
		}
	}
	if q := byName(d, "nas/quota"); q.QuotaBytes == 0 || q.RefquotaBytes == 0 {
		t.Fatalf("the quotas travel with the datasets: %+v", q.Dataset)
	}
}

// Step k4: keys unloaded, the raw key file moved away. The locked datasets
// meant to be mounted are looked under; nothing was written there.
func TestDatasetsLockedAndKeyFileMissing(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k4-locked.zfs-list-datasets.txt", "", 0)
	root := machine(t)
	if err := os.Remove(filepath.Join(root, "etc/zfs/keys/secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "nas/vault"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: root}
	d := readDatasets(t, c)
	secret := byName(d, "nas/secret")
	if secret.KeyStatus != "unavailable" || secret.KeyFile == nil || secret.KeyFile.Problem != facts.KeyFileMissing {
		t.Fatalf("nas/secret: keystatus %q key file %+v", secret.KeyStatus, secret.KeyFile)
	}
	for _, name := range []string{"nas/secret", "nas/secret/photos", "nas/vault", "backup/media"} {
		s := byName(d, name)
		if s.Underneath == nil || s.Underneath.Path != s.Mountpoint || s.Underneath.Files != 0 || s.Underneath.Error != "" {
			t.Errorf("%s: underneath %+v", name, s.Underneath)
		}
	}
	if s := byName(d, "nas/archive"); s.Underneath != nil {
		t.Errorf("nas/archive is canmount=noauto: looked under %+v", s.Underneath)
	}
}

// Step k5: nas/media unmounted and files written into /srv/media. The tree
// is rebuilt from the real `find /srv/media` of that step
// (k5-unmounted.find-mountpoint.txt): the same names, sizes and link.
func TestDatasetsUnmountedWithFilesUnderneath(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k5-unmounted.zfs-list-datasets.txt", "", 0)
	root := machine(t)
	raw, err := os.ReadFile(captured + "k5-unmounted.find-mountpoint.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var kind, path string
		var size int
		if _, err := fmt.Sscanf(line, "%s %d %s", &kind, &size, &path); err != nil {
			t.Fatalf("find line %q: %v", line, err)
		}
		p := filepath.Join(root, path)
		switch kind {
		case "d":
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case "f":
			mustWrite(t, p, strings.Repeat("x", size), 0o644)
		case "l":
			if err := os.Symlink("/etc", p); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: root}
	d := readDatasets(t, c)
	media := byName(d, "nas/media")
	u := media.Underneath
	if u == nil || u.Path != "/srv/media" || u.Error != "" || u.Files != 3 || u.Bytes != 307206 {
		t.Fatalf("nas/media underneath %+v", u)
	}
	if !slices.Contains(u.Examples, "import/backup.tar") || !slices.Contains(u.Examples, "etc-link") {
		t.Fatalf("examples %v", u.Examples)
	}
}

// A zfs without some properties (encryption came in 0.8) rejects -o; the
// property is dropped, the list retried, and the working list kept. The
// rejection is DERIVED from the real 2.3.2 one (k2-badprop: exit 2, "bad
// property list: invalid property 'keystatuz'") with the name of a real
// column, and the listing is k1's without that column.
func TestDatasetsDropsPropertiesTheReleaseLacks(t *testing.T) {
	dir := t.TempDir()
	stderr, err := os.ReadFile(captured + "k2-badprop.zfs-list-datasets.txt.stderr")
	if err != nil {
		t.Fatal(err)
	}
	without := slices.DeleteFunc(slices.Clone(zfs.DatasetPropColumns), func(c string) bool { return c == "keystatus" })
	listing := filepath.Join(dir, "k1-without-keystatus.txt")
	raw, _ := os.ReadFile(captured + "k1-healthy.zfs-list-datasets.txt")
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		f := strings.Split(line, "\t")
		b.WriteString(strings.Join(slices.Delete(f, 12, 13), "\t") + "\n")
	}
	mustWrite(t, listing, b.String(), 0o644)
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, "", strings.ReplaceAll(string(stderr), "keystatuz", "keystatus"), 2)
	zfsCmd.answer("list -Hp -t filesystem,volume -o "+strings.Join(without, ","), listing, "", 0)
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: machine(t)}
	d := readDatasets(t, c)
	if !slices.Equal(d.Missing, []string{"keystatus"}) || len(d.Datasets) != 17 {
		t.Fatalf("missing %v, %d datasets", d.Missing, len(d.Datasets))
	}
	if s := byName(d, "nas/secret"); s.KeyStatus != "" || s.EncryptionRoot != "nas/secret" || s.KeyFile == nil {
		t.Fatalf("nas/secret %+v", s)
	}
	// The next poll uses the working list at once: the full one would fail.
	zfsCmd.answer(datasetsArgv, "", "stand-in: the full list must not be tried again\n", 2)
	if d := readDatasets(t, c); !slices.Equal(d.Missing, []string{"keystatus"}) || len(d.Datasets) != 17 {
		t.Fatalf("second poll: missing %v, %d datasets", d.Missing, len(d.Datasets))
	}
	// A rejected property that is not in the list (the real k2 stderr) is an
	// error, not a guess.
	other := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool}
	zfsCmd.answer(datasetsArgv, "", string(stderr), 2)
	if _, err := other.Read(context.Background()); execx.KindOf(err) != execx.KindFailed || !strings.Contains(err.Error(), "keystatuz") {
		t.Fatalf("unknown rejected property: %v", err)
	}
}

// zfs exits 1 with "cannot open 'x': dataset does not exist" for a dataset
// gone while it lists, and still prints the others (real: k2-nonexistent,
// a named dataset that does not exist): the lines printed are kept.
func TestDatasetsKeepsTheLinesWhenADatasetVanishes(t *testing.T) {
	stderr, err := os.ReadFile(captured + "k2-nonexistent.zfs-list-datasets.txt.stderr")
	if err != nil {
		t.Fatal(err)
	}
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k2-nonexistent.zfs-list-datasets.txt", string(stderr), 1)
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: machine(t)}
	d := readDatasets(t, c)
	if len(d.Datasets) != 2 || d.Datasets[1].Name != "nas/media" {
		t.Fatalf("datasets %+v", d.Datasets)
	}
	// Any other failure is an error.
	zfsCmd.answer(datasetsArgv, captured+"k2-nonexistent.zfs-list-datasets.txt", "internal error: out of memory\n", 1)
	if _, err := c.Read(context.Background()); execx.KindOf(err) != execx.KindFailed {
		t.Fatalf("err %v", err)
	}
}

// A tab in a mountpoint (real: k6) makes one line unreadable: the other
// datasets are still published, and the line is a parse error.
func TestDatasetsTabInAMountpointCostsOneLine(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k6-tab-mountpoint.zfs-list-datasets.txt", "", 0)
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: machine(t)}
	pub := &memPublisher{}
	err := c.Collect(context.Background(), pub)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nas/tabbed") {
		t.Fatalf("err %v, want a parse error naming the line", err)
	}
	if ce := ErrorFor(c.Name(), "", err); ce.Kind != facts.KindParse {
		t.Fatalf("collector error %+v", ce)
	}
	msgs := pub.all()
	if len(msgs) != 1 {
		t.Fatalf("published %d messages", len(msgs))
	}
	d := msgs[0].data.(facts.DatasetsData)
	if len(d.Datasets) < 10 || byName(d, "nas/secret").Name == "" {
		t.Fatalf("%d datasets published", len(d.Datasets))
	}
}

func TestDatasetsHungZfsIsATimeout(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, "HANG", "", 0)
	c := &Datasets{Runner: execx.New(300 * time.Millisecond), Zfs: zfsCmd.Tool}
	start := time.Now()
	err := c.Collect(context.Background(), &memPublisher{})
	if execx.KindOf(err) != execx.KindTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
	if ce := ErrorFor(c.Name(), "", err); !strings.Contains(ce.Fix, "hangs") {
		t.Fatalf("collector error %+v", ce)
	}
}

// Checks that take longer than CheckTimeout (a hung filesystem) are given
// up on and say so; they never read as "nothing underneath". Here the walk
// of 5,000 files against a timeout of a microsecond stands in for the hang.
func TestDatasetsChecksThatDoNotFinishSaySo(t *testing.T) {
	zfsCmd := newAnswers(t, "zfs")
	zfsCmd.answer(datasetsArgv, captured+"k5-unmounted.zfs-list-datasets.txt", "", 0)
	root := machine(t)
	for i := range 5000 {
		mustWrite(t, filepath.Join(root, "srv/media/import", fmt.Sprintf("IMG_%04d.jpg", i)), "x", 0o644)
	}
	c := &Datasets{Runner: execx.New(5 * time.Second), Zfs: zfsCmd.Tool, Root: root, CheckTimeout: time.Microsecond}
	d := readDatasets(t, c)
	u := byName(d, "nas/media").Underneath
	if u == nil || u.Files != 0 || !strings.Contains(u.Error, "not checked") {
		t.Fatalf("underneath %+v", u)
	}
	if k := byName(d, "nas/secret").KeyFile; k == nil || k.Problem != facts.KeyFileUnreadable || !strings.Contains(k.Detail, "not checked") {
		t.Fatalf("key file %+v", k)
	}
	// Given time, the same poll counts them.
	c.CheckTimeout = 0
	for deadline := time.Now().Add(5 * time.Second); ; {
		d = readDatasets(t, c)
		if u := byName(d, "nas/media").Underneath; u != nil && u.Error == "" {
			if u.Files != 5000 {
				t.Fatalf("underneath %+v", u)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checks never finished: %+v", byName(d, "nas/media").Underneath)
		}
		time.Sleep(50 * time.Millisecond) // the given-up walk may still run
	}
}
