package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
)

// fixedOutput stands in for smartctl: it answers a captured output.
type fixedOutput struct {
	out  []byte
	err  error
	argv []string
}

func (f *fixedOutput) Run(_ context.Context, name string, args ...string) (execx.Result, error) {
	f.argv = append([]string{name}, args...)
	return execx.Result{Stdout: f.out}, f.err
}

// The replacement's SMART check on real smartctl outputs (testdata/smartctl,
// SOURCES.md): a healthy disk passes, a failing one does not, a disk
// without SMART (QEMU's scsi-hd, exit 4) is unknown, and no output at all
// is an error that names the device.
func TestSmartHealthForTheReplacement(t *testing.T) {
	for _, c := range []struct {
		file string
		want string
	}{
		{"sata-hdd-wd140edfz-healthy.json", "passed"},
		{"usb-jmicron-hitachi-hdd-failing-realloc-now.json", "failed"},
		{"compact-scsi-exit4-no-smart-support.json", "unknown"},
	} {
		out, err := os.ReadFile("../testdata/smartctl/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		run := &fixedOutput{out: out, err: errors.New("exit status 4")}
		got, err := smartHealth(context.Background(), run, "/dev/disk/by-id/wwn-0x5000c500a0000003")
		verdict := "unknown"
		if got != nil && *got {
			verdict = "passed"
		} else if got != nil {
			verdict = "failed"
		}
		if err != nil || verdict != c.want {
			t.Errorf("%s: %s, %v; want %s", c.file, verdict, err, c.want)
		}
		if strings.Join(run.argv, " ") != "smartctl --json -H -i /dev/disk/by-id/wwn-0x5000c500a0000003" {
			t.Errorf("ran %q", run.argv)
		}
	}
	_, err := smartHealth(context.Background(), &fixedOutput{err: errors.New("signal: killed")}, "/dev/sdx")
	if err == nil || !strings.Contains(err.Error(), "/dev/sdx") {
		t.Errorf("no output: %v", err)
	}
}
