package zfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
