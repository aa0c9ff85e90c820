package zfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchText6 is a real 6-disk raidz2 pool (ZoL 0.6, openzfs/zfs#3049).
const benchText6 = "zol-0.6-raidz2-io-failure-HC-data-errors.txt"

// benchJSON6 is the zpool-status(8) JSON example: 6 disks in raidz1,
// special and dedup classes.
const benchJSON6 = "openzfs-2.3-manpage-status-j-c-vendor-model-size-jq.json"

func readStatusFixture(b *testing.B, name string) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(repoTestdata, "zpool-status", name))
	if err != nil {
		b.Skip("fixture missing:", err)
	}
	return data
}

// synthText1000 builds a SYNTHETIC 1,000-disk pool for benchmarking only:
// the header, pool, raidz2 and leaf lines of a real capture
// (linux-truenas-raidz2-online-scrubbed-tabs.txt) repeated 100 x 10.
func synthText1000(b *testing.B) []byte {
	real := string(readStatusFixture(b, "linux-truenas-raidz2-online-scrubbed-tabs.txt"))
	lines := strings.Split(real, "\n")
	var head, top, leaf, tail []string
	for i, l := range lines {
		switch {
		case strings.Contains(l, "raidz2-0"):
			top = append(top, l)
		case strings.HasPrefix(l, "\t    sde"):
			leaf = append(leaf, l)
		case len(top) == 0:
			head = append(head, l)
		case strings.HasPrefix(l, "errors:") || (i > 0 && len(tail) > 0):
			tail = append(tail, l)
		}
	}
	if len(top) != 1 || len(leaf) != 1 {
		b.Fatal("fixture layout changed")
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(head, "\n") + "\n")
	for v := 0; v < 100; v++ {
		sb.WriteString(strings.Replace(top[0], "raidz2-0", fmt.Sprintf("raidz2-%d", v), 1) + "\n")
		for d := 0; d < 10; d++ {
			sb.WriteString(strings.Replace(leaf[0], "sde", fmt.Sprintf("d%03d", v*10+d), 1) + "\n")
		}
	}
	sb.WriteString("\n" + strings.Join(tail, "\n"))
	return []byte(sb.String())
}

// synthJSON1000 builds a SYNTHETIC 1,000-disk pool for benchmarking only,
// repeating the raidz1 and disk objects of the man page JSON example.
func synthJSON1000(b *testing.B) []byte {
	pools, err := ParseStatusJSON(bytes.NewReader(readStatusFixture(b, benchJSON6)))
	if err != nil || len(pools) != 1 {
		b.Fatal("man page example:", err)
	}
	var sb strings.Builder
	sb.WriteString(`{"output_version":{"command":"zpool status","vers_major":0,"vers_minor":1},"pools":{"tank":{"name":"tank","state":"ONLINE","pool_guid":3920273586464696295,"txg":16597,"spa_version":5000,"zpl_version":5,"vdevs":{"tank":{"name":"tank","vdev_type":"root","state":"ONLINE","read_errors":0,"write_errors":0,"checksum_errors":0,"vdevs":{`)
	for v := 0; v < 100; v++ {
		if v > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"raidz1-%d":{"name":"raidz1-%d","vdev_type":"raidz","guid":763132626387621737,"state":"ONLINE","alloc_space":67108864,"total_space":11991548264448,"def_space":7982152237056,"rep_dev_size":11991548264448,"read_errors":0,"write_errors":0,"checksum_errors":0,"vdevs":{`, v, v)
		for d := 0; d < 10; d++ {
			if d > 0 {
				sb.WriteByte(',')
			}
			n := fmt.Sprintf("ca1eb824-c371-491d-ac13-37637e3%05d", v*10+d)
			fmt.Fprintf(&sb, `%q:{"name":%q,"vdev_type":"disk","guid":12841765308123764671,"path":"/dev/disk/by-partuuid/%s","state":"ONLINE","rep_dev_size":4000787030016,"phys_space":4000787030016,"read_errors":0,"write_errors":0,"checksum_errors":0,"vendor":"ATA","model":"WDC WD40EFZX-68AWUN0","size":"3.6T"}`, n, n, n)
		}
		sb.WriteString(`}}`)
	}
	sb.WriteString(`}}},"error_count":0}}}`)
	return []byte(sb.String())
}

func BenchmarkParseStatusText(b *testing.B) {
	for _, c := range []struct {
		name string
		data func(*testing.B) []byte
	}{
		{"real-6disk", func(b *testing.B) []byte { return readStatusFixture(b, benchText6) }},
		{"synthetic-1000disk", synthText1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			data := c.data(b)
			checkLeaves(b, func(r io.Reader) ([]*Pool, error) { return ParseStatusTextIn(r, time.UTC) }, data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseStatusTextIn(bytes.NewReader(data), time.UTC); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseStatusJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		data func(*testing.B) []byte
	}{
		{"real-6disk", func(b *testing.B) []byte { return readStatusFixture(b, benchJSON6) }},
		{"synthetic-1000disk", synthJSON1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			data := c.data(b)
			checkLeaves(b, ParseStatusJSON, data)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseStatusJSON(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkLeaves makes sure the benchmark input parses to 6 or 1000 disks.
func checkLeaves(b *testing.B, parse func(io.Reader) ([]*Pool, error), data []byte) {
	b.Helper()
	pools, err := parse(bytes.NewReader(data))
	if err != nil || len(pools) != 1 {
		b.Fatalf("parse: %d pools, %v", len(pools), err)
	}
	n := 0
	for _, cv := range pools[0].AllVdevs() {
		n += len(cv.Vdev.Leaves())
	}
	if n != 6 && n != 1000 {
		b.Fatalf("%d leaves", n)
	}
}

// snapshotSeed is the real OpenZFS 2.3.2 capture of `zfs list -Hp -t
// snapshot -o name,creation,used -s creation` (49 snapshots on 9
// datasets, named as sanoid, syncoid, zfs-auto-snapshot, TrueNAS, zrepl
// and pyznap name them).
const snapshotSeed = "k1-healthy.zfs-list-snapshots.txt"

// scaledSnapshots is a DERIVED listing for benchmarking: the seed's lines
// repeated until n snapshots, each repetition r on its own child datasets
// (DATASET/cNN, NN = r mod 20: its 9 datasets become 180) and r weeks later,
// so that names, tools and gaps stay those of the real capture. It reads
// like a reader of the real command: generated as it is consumed, so that
// the memory a test measures is the parser's, not the input's.
type scaledSnapshots struct {
	seed    [][3]string // name, creation, used
	n, next int
	buf     []byte
}

func newScaledSnapshots(tb testing.TB, n int) *scaledSnapshots {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(repoTestdata, "captured", "zfs-2.3.2", snapshotSeed))
	if err != nil {
		tb.Skip("seed missing:", err)
	}
	s := &scaledSnapshots{n: n}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			tb.Fatalf("seed line %q", l)
		}
		s.seed = append(s.seed, [3]string{f[0], f[1], f[2]})
	}
	return s
}

func (s *scaledSnapshots) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.next < s.n {
		r, i := s.next/len(s.seed), s.next%len(s.seed)
		line := s.seed[i]
		ds, snap, _ := strings.Cut(line[0], "@")
		created, _ := strconv.ParseInt(line[1], 10, 64)
		s.buf = fmt.Appendf(s.buf, "%s/c%02d@%s\t%d\t%s\n", ds, r%20, snap, created+int64(r)*7*86400, line[2])
		s.next++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *scaledSnapshots) bytes(tb testing.TB) []byte {
	b, err := io.ReadAll(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkSummarizeSnapshots(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"real-49", 49}, {"scaled-50000", 50000}} {
		b.Run(c.name, func(b *testing.B) {
			data := newScaledSnapshots(b, c.n).bytes(b)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				_, total, err := SummarizeSnapshots(bytes.NewReader(data))
				if err != nil || total != c.n {
					b.Fatal(total, err)
				}
			}
		})
	}
}

// TestSummarizeSnapshotsMemory holds the summary of 50,000 snapshots (the
// derived listing above, streamed) and checks what stays on the heap: the
// state is per dataset, not per snapshot.
func TestSummarizeSnapshotsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 50,000 lines")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stats, total, err := SummarizeSnapshots(newScaledSnapshots(t, 50000))
	if err != nil || total != 50000 {
		t.Fatal(total, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	perDataset := held / int64(len(stats))
	t.Logf("50,000 snapshots, %d datasets: %d bytes held (%d per dataset)", len(stats), held, perDataset)
	if len(stats) != 180 || held > 512<<10 {
		t.Errorf("%d datasets, %d bytes held after the summary", len(stats), held)
	}
	runtime.KeepAlive(stats)
}
