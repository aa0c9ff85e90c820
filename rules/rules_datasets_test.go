package rules

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/mountcheck"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

// capturedDatasets parses a real datasets listing of step k (zfs list -Hp
// -t filesystem,volume -o <zfs.DatasetPropColumns>).
func capturedDatasets(t testing.TB, file string) []facts.DatasetState {
	t.Helper()
	ds := parseTestdata(t, filepath.Join(cap232, file), func(r io.Reader) ([]zfs.DatasetProps, error) {
		return zfs.ParseDatasetProps(r, zfs.DatasetPropColumns)
	})
	out := make([]facts.DatasetState, len(ds))
	for i := range ds {
		out[i].DatasetProps = ds[i]
	}
	return out
}

func dataset(t testing.TB, ds []facts.DatasetState, name string) *facts.DatasetState {
	t.Helper()
	for i := range ds {
		if ds[i].Name == name {
			return &ds[i]
		}
	}
	t.Fatalf("no dataset %s", name)
	return nil
}

// underneathOf reads a real `find DIR -printf '%y %s %p\n'` listing of a
// mountpoint into what the collector's look below it reports: files are
// what is not a directory, bytes the regular files' sizes, examples the
// first three files, relative to DIR.
func underneathOf(t testing.TB, file, dir string) *facts.DirContents {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", cap232, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := &facts.DirContents{Path: dir}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		size, p, _ := strings.Cut(rest, " ")
		if kind == "d" {
			continue
		}
		u.Files++
		if kind == "f" {
			n, _ := strconv.ParseUint(size, 10, 64)
			u.Bytes += n
		}
		if len(u.Examples) < 3 {
			u.Examples = append(u.Examples, strings.TrimPrefix(p, dir+"/"))
		}
	}
	return u
}

// tickFor ticks every 15 s through d and returns the notification lines.
func tickFor(e *Engine, from time.Time, d time.Duration) []string {
	var out []string
	for s := time.Duration(0); s <= d; s += 15 * time.Second {
		out = append(out, noteLines(e.Tick(from.Add(s)))...)
	}
	return out
}

var datasetAlerts = []string{nameDatasetLocked, nameDatasetNotMounted, nameKeyFileProblem, nameReplicationInterrupted, nameDatasetQuota}

// Step k on real OpenZFS 2.3.2: healthy (nothing), keys unloaded (three
// encryption roots locked: a file key, a passphrase, a noauto hex key whose
// file was then moved away), keys loaded again (all resolve).
func TestLockedDatasetsOnCapture(t *testing.T) {
	e := newTestEngine()
	observe(t, e, datasetsEnv(t, t0, capturedDatasets(t, "k1-healthy.zfs-list-datasets.txt")...), t0)
	sameList(t, active(e, datasetAlerts...), nil)

	locked := capturedDatasets(t, "k4-locked.zfs-list-datasets.txt")
	// The check the collector makes of the moved-away hex key file
	// (k4-keyfile-missing: zfs load-key says "No such file or directory").
	dataset(t, locked, "nas/archive").KeyFile = &facts.KeyFileCheck{Path: "/etc/zfs/keys/archive.hex", Problem: facts.KeyFileMissing}
	now := t0.Add(time.Minute)
	observe(t, e, datasetsEnv(t, now, locked...), now)
	got := tickFor(e, now, 11*time.Minute)
	want := []string{
		"DatasetLocked critical dataset=nas/secret pool=nas",
		"DatasetLocked critical dataset=nas/vault pool=nas",
		"DatasetLocked warning dataset=nas/archive pool=nas",
		"KeyFileProblem warning dataset=nas/archive pool=nas",
		// backup/media, left unmounted by zfs receive -s -u with its resume
		// token set, is this alert's, not DatasetNotMounted's.
		"ReplicationInterrupted warning dataset=backup/media pool=backup",
	}
	sameList(t, active(e, datasetAlerts...), want)
	if len(got) == 0 {
		t.Fatal("nothing was sent")
	}
	texts := map[string][]string{
		"nas/secret": {"keylocation file:///etc/zfs/keys/secret.key", "`zfs load-key nas/secret` (it reads /etc/zfs/keys/secret.key)",
			"nas/secret, nas/secret/photos cannot mount", "`zfs mount -a`"},
		"nas/vault":   {"`zfs load-key nas/vault` and enter the passphrase", "`zfs mount nas/vault`"},
		"nas/archive": {"Its key file /etc/zfs/keys/archive.hex is missing: restore it from your backup"},
	}
	for _, a := range e.Alerts(testHost) {
		if a.Name != nameDatasetLocked {
			continue
		}
		for _, w := range texts[a.Labels["dataset"]] {
			if !strings.Contains(a.Description, w) {
				t.Errorf("DatasetLocked %s does not say %q:\n%s", a.Labels["dataset"], w, a.Description)
			}
		}
	}
	if k := find(e, nameKeyFileProblem); k == nil || !strings.Contains(k.Description, "next boot, will fail") || strings.Contains(k.Description, "change-key") {
		t.Errorf("KeyFileProblem of a locked dataset (no rewrap while locked): %+v", k)
	}

	now = now.Add(time.Hour)
	observe(t, e, datasetsEnv(t, now, capturedDatasets(t, "k4-unlocked.zfs-list-datasets.txt")...), now)
	back := tickFor(e, now, time.Minute)
	for _, w := range []string{"resolved critical DatasetLocked: dataset nas/secret is locked: its key is not loaded, 2 filesystem(s) not mounted",
		"resolved warning KeyFileProblem: key file of nas/archive: /etc/zfs/keys/archive.hex is missing"} {
		if !slices.Contains(back, w) {
			t.Errorf("after the keys were loaded, no %q in %q", w, back)
		}
	}
}

// k5: nas/media unmounted and files written into /srv/media on the
// guest's root disk: critical, with the count, the bytes, examples and the
// safe way to move them back. A look that failed says so, never "empty".
func TestNotMountedWithFilesUnderneath(t *testing.T) {
	ds := capturedDatasets(t, "k5-unmounted.zfs-list-datasets.txt")
	media := dataset(t, ds, "nas/media")
	media.Underneath = underneathOf(t, "k5-unmounted.find-mountpoint.txt", "/srv/media")
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameDatasetNotMounted) })
	observe(t, e, datasetsEnv(t, t0, ds...), t0)
	a := findLabel(e, nameDatasetNotMounted, "nas/media")
	if a == nil || a.Severity != alert.Critical || a.Summary != "dataset nas/media is not mounted at /srv/media: 3 files (300.0 KiB) written underneath" {
		t.Fatalf("DatasetNotMounted %+v", a)
	}
	for _, w := range []string{"mv /srv/media /srv/media.zwatch-underneath", "zfs mount nas/media", "cp -a /srv/media.zwatch-underneath/. /srv/media/",
		"(e.g. etc-link, import/2026/IMG_2001.jpg, import/backup.tar)", "mounting hides what is there"} {
		if !strings.Contains(a.Description, w) {
			t.Errorf("does not say %q:\n%s", w, a.Description)
		}
	}
	if a.Evidence["underneath_files"] != "3" || a.Evidence["underneath_bytes"] != "307206" {
		t.Errorf("evidence %v", a.Evidence)
	}

	media.Underneath = &facts.DirContents{Path: "/srv/media", Error: "open /srv/media: permission denied"}
	observe(t, e, datasetsEnv(t, t0.Add(time.Minute), ds...), t0.Add(time.Minute))
	a = findLabel(e, nameDatasetNotMounted, "nas/media")
	if a == nil || a.Severity != alert.Warning || !strings.Contains(a.Description, "could not look into /srv/media (open /srv/media: permission denied)") || strings.Contains(a.Description, "empty") {
		t.Errorf("an unreadable mountpoint: %+v", a)
	}

	// A subdirectory that could not be read after some files were counted:
	// the files are there, at least that many.
	media.Underneath = &facts.DirContents{Path: "/srv/media", Files: 2, Bytes: 6, Examples: []string{"etc-link", "import/2026/IMG_2001.jpg"},
		Error: "open /srv/media/import/private: permission denied"}
	observe(t, e, datasetsEnv(t, t0.Add(90*time.Second), ds...), t0.Add(90*time.Second))
	a = findLabel(e, nameDatasetNotMounted, "nas/media")
	if a == nil || a.Severity != alert.Critical || !strings.Contains(a.Summary, "at least 2 files") || !strings.Contains(a.Description, "Part of it could not be read (open /srv/media/import/private: permission denied)") {
		t.Errorf("files counted before an unreadable subdirectory: %+v", a)
	}

	// A name with a space is quoted for copy-paste (the real row, marked
	// unmounted with an empty directory).
	docs := dataset(t, ds, "nas/My Documents")
	docs.Mounted, docs.Underneath = "no", &facts.DirContents{Path: docs.Mountpoint}
	observe(t, e, datasetsEnv(t, t0.Add(2*time.Minute), ds...), t0.Add(2*time.Minute))
	if a := findLabel(e, nameDatasetNotMounted, "nas/My Documents"); a == nil || !strings.Contains(a.Description, "`zfs mount 'nas/My Documents'`") || !strings.Contains(a.Description, "is empty") {
		t.Errorf("name with a space: %+v", a)
	}
	// nas itself unmounted with files under /nas (derived: k5's row marked
	// unmounted): its mounted children are unmounted first, deepest first,
	// and mounted again after.
	root := dataset(t, ds, "nas")
	root.Mounted, root.Underneath = "no", &facts.DirContents{Path: "/nas", Files: 1, Bytes: 6, Examples: []string{"IMG_2001.jpg"}}
	observe(t, e, datasetsEnv(t, t0.Add(3*time.Minute), ds...), t0.Add(3*time.Minute))
	a = findLabel(e, nameDatasetNotMounted, "nas")
	if a == nil || !strings.Contains(a.Description, "zfs unmount nas/secret/photos\n") || !(strings.Index(a.Description, "zfs unmount nas/secret/photos\n") < strings.Index(a.Description, "zfs unmount nas/secret\n")) ||
		!strings.Contains(a.Description, "zfs mount nas\n    zfs mount -a\n    cp -a /nas.zwatch-underneath/. /nas/") ||
		!strings.Contains(a.Description, "1 file (6 B) was written") {
		t.Errorf("nas with its children mounted: %+v", a)
	}
	root.Mounted, root.Underneath = "yes", nil

	// Legacy, none, canmount off/noauto and volumes are never "not mounted".
	for _, n := range []string{"nas/legacy", "nas/nomount", "nas/off", "nas/noauto", "nas/vol", "nas/sparsevol"} {
		if findLabel(e, nameDatasetNotMounted, n) != nil {
			t.Errorf("%s raised DatasetNotMounted", n)
		}
	}
	// Ignored on purpose.
	e = newTestEngine(func(c *config.RulesConfig) {
		datasetsConfig.edit(c, func(d *datasetSettings) { d.Ignore = []string{"nas/*", "backup/*"} })
	})
	observe(t, e, datasetsEnv(t, t0, ds...), t0)
	sameList(t, active(e, datasetAlerts[:3]...), nil)
}

func findLabel(e *Engine, name, ds string) *alert.Alert {
	for _, a := range e.Alerts(testHost) {
		if a.Name == name && a.Labels["dataset"] == ds && a.State != alert.Resolved {
			return &a
		}
	}
	return nil
}

// k3: a zfs send -I cut half way into zfs receive -s leaves a resume token.
func TestReplicationInterruptedOnCapture(t *testing.T) {
	e := newTestEngine()
	ds := capturedDatasets(t, "k3-interrupted.zfs-list-datasets.txt")
	observe(t, e, datasetsEnv(t, t0, ds...), t0)
	tickFor(e, t0, time.Hour+time.Minute)
	a := findLabel(e, nameReplicationInterrupted, "backup/media")
	token := dataset(t, ds, "backup/media").ReceiveResumeToken
	if a == nil || a.State != alert.Firing || !strings.Contains(a.Description, "zfs send -t "+token+" | zfs receive -s backup/media") ||
		!strings.Contains(a.Description, "`zfs receive -A backup/media`") || !strings.HasPrefix(token, "1-") {
		t.Fatalf("ReplicationInterrupted %+v", a)
	}
}

// capturedSnapshots sums up a real snapshot listing of step k.
func capturedSnapshots(t testing.TB, file string) facts.SnapshotsData {
	t.Helper()
	return parseTestdata(t, filepath.Join(cap232, file), func(r io.Reader) (facts.SnapshotsData, error) {
		stats, total, err := zfs.SummarizeSnapshots(r)
		return facts.SnapshotsData{Datasets: stats, Total: total}, err
	})
}

func snapshotsEnv(t testing.TB, at time.Time, d facts.SnapshotsData) bus.Envelope {
	return envOf(t, facts.Snapshots.Name(), "snapshots", at, d)
}

// The key file of nas/secret (keyformat raw), read by the collector's own
// check: 31 bytes as in k4-keyfile-short ("Raw key too short (expected
// 32)"), mode 0644. The key is loaded (k5), so the text also offers a new
// key and zfs change-key.
func TestKeyFileProblemFromCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret.key")
	if err := os.WriteFile(file, make([]byte, 31), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := capturedDatasets(t, "k5-unmounted.zfs-list-datasets.txt")
	check := mountcheck.KeyFile(file, "raw")
	check.Path = "/etc/zfs/keys/secret.key"
	dataset(t, ds, "nas/secret").KeyFile = &check
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameKeyFileProblem) })
	observe(t, e, datasetsEnv(t, t0, ds...), t0)
	a := findLabel(e, nameKeyFileProblem, "nas/secret")
	if a == nil || a.Summary != "key file of nas/secret: /etc/zfs/keys/secret.key has the wrong size" {
		t.Fatalf("KeyFileProblem %+v (check %+v)", a, check)
	}
	for _, w := range []string{"will fail", "(umask 077; head -c 32 /dev/urandom > /etc/zfs/keys/secret.key)", "`zfs change-key nas/secret`", check.Detail} {
		if !strings.Contains(a.Description, w) {
			t.Errorf("does not say %q:\n%s", w, a.Description)
		}
	}
}

// The collector's own look, on a directory laid out as k5's /srv/media
// was (k5-unmounted.find-mountpoint.txt: two files, 6 and 307200 bytes, and
// a symbolic link to /etc), counts what the listing shows, and the alert
// says so.
func TestNotMountedFromCollectorLook(t *testing.T) {
	dir := t.TempDir()
	for p, size := range map[string]int{"import/2026/IMG_2001.jpg": 6, "import/backup.tar": 307200} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc-link")); err != nil {
		t.Fatal(err)
	}
	look := mountcheck.Underneath(dir, 0)
	want := underneathOf(t, "k5-unmounted.find-mountpoint.txt", "/srv/media")
	if look.Files != want.Files || look.Bytes != want.Bytes || look.Error != "" {
		t.Fatalf("the collector's look %+v, the capture's listing %+v", look, want)
	}
	look.Path = "/srv/media"
	ds := capturedDatasets(t, "k5-unmounted.zfs-list-datasets.txt")
	dataset(t, ds, "nas/media").Underneath = &look
	e := newTestEngine(func(c *config.RulesConfig) { c.For = forZero(nameDatasetNotMounted) })
	observe(t, e, datasetsEnv(t, t0, ds...), t0)
	if a := findLabel(e, nameDatasetNotMounted, "nas/media"); a == nil || a.Severity != alert.Critical || !strings.Contains(a.Summary, "3 files (300.0 KiB)") {
		t.Errorf("DatasetNotMounted %+v", a)
	}
}
