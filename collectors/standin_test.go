package collectors

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/testutil"
)

// answers is a stand-in tool whose answer to each argv can change during a
// test: answer(argv, file, stderr, rc) makes the tool print the real
// output file (and stderr) and exit rc; an argv it has no answer for exits
// 2 saying so. file "HANG" sleeps forever.
type answers struct {
	t    testing.TB
	dir  string
	Tool string
}

func newAnswers(t testing.TB, name string) *answers {
	t.Helper()
	dir := t.TempDir()
	tool := testutil.WriteScript(t, dir, name, `#!/bin/sh
key=$(printf '%s' "$*" | tr ' /' '__')
d=$(dirname "$0")/answers
[ -f "$d/$key.rc" ] || { echo "stand-in: unexpected argv: $*" >&2; exit 2; }
[ -f "$d/$key.hang" ] && exec sleep 3600
[ -f "$d/$key.out" ] && cat "$(cat "$d/$key.out")"
[ -f "$d/$key.err" ] && cat "$d/$key.err" >&2
exit "$(cat "$d/$key.rc")"
`)
	if err := os.Mkdir(filepath.Join(dir, "answers"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &answers{t: t, dir: filepath.Join(dir, "answers"), Tool: tool}
}

// answer sets what argv prints: file ("" for nothing, "HANG" to hang), stderr and exit code.
func (a *answers) answer(argv, file, stderr string, rc int) {
	a.t.Helper()
	key := filepath.Join(a.dir, strings.NewReplacer(" ", "_", "/", "_").Replace(argv))
	for _, ext := range []string{".out", ".err", ".hang"} {
		os.Remove(key + ext)
	}
	switch file {
	case "":
	case "HANG":
		a.write(key+".hang", "")
	default:
		abs, err := filepath.Abs(file)
		if err != nil {
			a.t.Fatal(err)
		}
		a.write(key+".out", abs)
	}
	if stderr != "" {
		a.write(key+".err", stderr)
	}
	a.write(key+".rc", string(rune('0'+rc)))
}

func (a *answers) write(path, content string) {
	a.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
}
