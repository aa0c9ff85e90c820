package provision

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// The readers of blkid, zdb and /proc/self/mountinfo output take whatever
// the tools print; none may panic or hang on odd input. Seeds are the
// fixtures of testdata/SOURCES.md.

func seedFile(f *testing.F, path string) {
	f.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzParseBlkidExport(f *testing.F) {
	seedFile(f, "testdata/hosts/pi-usb/out/blkid-sde1.txt")
	f.Add([]byte("TYPE\n=\n==x\nLABEL=a=b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k := range ParseBlkidExport(b) {
			if strings.Contains(k, "\n") {
				t.Fatalf("key %q spans lines", k)
			}
		}
	})
}

func FuzzParseZdbLabel(f *testing.F) {
	seedFile(f, "testdata/hosts/pi-usb/out/zdb-sde1.txt")
	f.Add([]byte("    name: 'a\n    state: \n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		name, state := ParseZdbLabel(b)
		if strings.Contains(name, "\n") || strings.Contains(state, "\n") {
			t.Fatalf("name %q state %q span lines", name, state)
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	// Derived: lines in the layout proc_pid_mountinfo(5) documents, with an
	// octal escape and a line too short to hold the separator.
	f.Add([]byte("22 1 8:17 / / rw,relatime shared:1 - ext4 /dev/sdb1 rw\n36 22 8:18 / /mnt/my\\040disk rw - xfs /dev/sdc2 rw\nshort - x\n"))
	f.Add([]byte("1 2 3 4 \\777\\0 - - -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range parseMountinfo(b) {
			if utf8.ValidString(string(b)) && strings.Contains(m.mountPoint, "\n") {
				t.Fatalf("mount point %q spans lines", m.mountPoint)
			}
		}
	})
}
