package zfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pastedDir holds a few pasted variants saved for people and for the
// command tests (cmd/zwatch): each is derived from a real output by a
// derivation of this package, and this test keeps them so (-update
// rewrites them); see its README.md.
var pastedDir = filepath.Join(repoTestdata, "zpool-status-pasted")

// fragment cuts a real output at its first line for which at holds; with
// tableOnly it also drops the errors: section, as a paste of the table alone.
func fragment(at func(string) bool, tableOnly bool) func(string) string {
	return func(s string) string {
		f := cutAt(s, at)
		if i := strings.Index(f, "\nerrors:"); tableOnly && i >= 0 {
			f = f[:i+1]
		}
		return f
	}
}

func derivationNamed(t *testing.T, name string) func(string) string {
	for _, d := range pasteDerivations {
		if d.name == name {
			return d.derive
		}
	}
	t.Fatalf("no derivation %q", name)
	return nil
}

func TestPastedSamples(t *testing.T) {
	samples := []struct {
		name, source string
		derive       func(string) string
	}{
		{"syslog", "zpool-status/freebsd-single-status-v-permanent-errors.txt", derivationNamed(t, "syslog")},
		{"journalctl-short", "zpool-status/zol-0.7-multiple-pools-9P-cksum-file-vdev-tabs.txt", derivationNamed(t, "journalctl-short")},
		{"chat-irc", "zpool-status/linux-truenas-raidz2-write-error-9P-tabs.txt", derivationNamed(t, "chat-irc")},
		{"markdown-fence", "zpool-status/openzfs-2.2.2-status-x-mirrors-8A-31-data-errors-tabs.txt", derivationNamed(t, "markdown-fence")},
		{"markdown-fence", "captured/zfs-2.3.2/b1-offline.zpool-status-j.json", derivationNamed(t, "markdown-fence")},
		{"crlf-tabs-expanded", "captured/zfs-2.3.2/c1-removed.zpool-status.txt", func(s string) string {
			return derivationNamed(t, "crlf")(derivationNamed(t, "tabs-expanded")(s))
		}},
		{"fragment-from-config", "zpool-status/freebsd-single-status-v-permanent-errors.txt", fragment(isConfigLine, false)},
		{"fragment-table-only", "zpool-status/freebsd-single-status-v-permanent-errors.txt", fragment(isNameHeader, true)},
		{"fragment-table-only-syslog", "captured/zfs-2.3.2/a.zpool-status.txt", func(s string) string {
			return derivationNamed(t, "syslog")(fragment(isNameHeader, true)(s))
		}},
	}
	for _, sm := range samples {
		src := filepath.Join(repoTestdata, sm.source)
		want := sm.derive(mustRead(t, src))
		name := filepath.Join(pastedDir, sm.name+"--"+filepath.Base(sm.source))
		if *update {
			if err := os.WriteFile(name, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("missing sample (go test ./zfs -run PastedSamples -update): %v", err)
		}
		if string(got) != want {
			t.Errorf("%s is not %s of %s: rerun with -update", name, sm.name, src)
		}
	}
}
