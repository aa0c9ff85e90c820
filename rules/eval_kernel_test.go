package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/kernlog"
)

// kernelLogs holds real kernel logs from public bug reports (its SOURCES.md).
const kernelLogs = "../testdata/kernel-log/"

func evalLines(as []alert.Alert) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.State)+" "+string(a.Severity)+" "+a.Name+": "+a.Summary)
	}
	sort.Strings(out)
	return out
}

// Saved kernel logs of every format, each from a real failure, give the
// alert a person pasting them should see.
func TestEvalKernelLogs(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"scsi-longhorn-1920-medium-error-dmesg-T.txt", []string{"firing warning KernelDiskErrors: sde: 5 medium errors"}},
		{"block-appstream-107-print-req-error-journal.txt", []string{"firing warning KernelDiskErrors: sdc: 4 I/O errors in 1 s"}},
		{"scsi-longhorn-13420-medium-error-syslog.txt", []string{"firing warning KernelDiskErrors: sdb: 1 buffer I/O error and 3 medium errors"}},
		{"libata-meta-sunxi-110-link-slow-down.txt", []string{"firing warning LinkResets: ata1: 3 link resets, 2 slow link responses and 1 link down in 15 s"}},
		{"usb-bb-qq-uas-3-reset-not-accepting.txt", []string{"firing warning LinkResets: usb 2-1.2: 4 link resets and 1 link error in 4 s"}},
	} {
		as, err := evalAt([]string{kernelLogs + c.file}, config.DefaultRules(), t0)
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		got := evalLines(as)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got  %q\n want %q", c.file, got, c.want)
		}
	}
}

// The wording names the likely part for the transport the kernel's name
// shows: a USB port is the enclosure, a SATA port the cable.
func TestEvalKernelLinkWording(t *testing.T) {
	for file, want := range map[string]string{
		"usb-bb-qq-uas-3-reset-not-accepting.txt":  "USB enclosure",
		"libata-meta-sunxi-110-link-slow-down.txt": "SATA cable",
	} {
		as, err := evalAt([]string{kernelLogs + file}, config.DefaultRules(), t0)
		if err != nil || len(as) != 1 {
			t.Fatalf("%s: %v %v", file, as, err)
		}
		if !strings.Contains(as[0].Description, want) || as[0].Evidence["ref"] == "" {
			t.Errorf("%s: description %q evidence %v", file, as[0].Description, as[0].Evidence)
		}
	}
}

// Bursts repeating within the window are critical. The link in the real
// sunxi log came back every five seconds at boot; with kernel.burst_gap at
// 4s each attempt is a burst of its own.
func TestEvalKernelBurstsCritical(t *testing.T) {
	cfg := config.DefaultRules()
	kernelConfig.edit(&cfg, func(k *kernelSettings) { k.BurstGap = config.Duration(4 * time.Second) })
	as, err := evalAt([]string{kernelLogs + "libata-meta-sunxi-110-link-slow-down.txt"}, cfg, t0)
	if err != nil || len(as) != 1 {
		t.Fatalf("%v %v", as, err)
	}
	if as[0].Severity != alert.Critical || as[0].Evidence["bursts"] != "4" {
		t.Errorf("%s %v", as[0].Severity, as[0].Evidence)
	}
}

// Each format is detected and named as the facts' source; the facts come
// one per burst, in time order, the last with what was not understood.
func TestEvalKernelSource(t *testing.T) {
	for file, want := range map[string]kernlog.Format{
		"scsi-longhorn-1920-medium-error-dmesg-T.txt":     kernlog.FormatDmesgTime,
		"block-appstream-107-print-req-error-journal.txt": kernlog.FormatJournal,
		"libata-meta-sunxi-110-link-slow-down.txt":        kernlog.FormatDmesg,
	} {
		data, err := os.ReadFile(kernelLogs + file)
		if err != nil {
			t.Fatal(err)
		}
		envs, err := kernelEnvelopes(file, data, t0, kernelConfig.defaults)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(envs) < 2 {
			t.Fatalf("%s: %d facts", file, len(envs))
		}
		for _, env := range envs {
			if !strings.Contains(string(env.Data), `"source":"`+string(want)+`"`) {
				t.Errorf("%s: %s", file, env.Data)
			}
		}
		if last := string(envs[len(envs)-1].Data); !strings.Contains(last, `"disks":[]`) {
			t.Errorf("%s: last fact %s", file, last)
		}
	}
}

// A file that is neither a tool output nor a kernel log says what it
// would have taken, kernel logs included.
func TestEvalKernelNotALog(t *testing.T) {
	_, err := evalAt([]string{filepath.Join("..", "testdata", "smartctl", "SOURCES.md")}, config.DefaultRules(), t0)
	if err == nil || !strings.Contains(err.Error(), "kernel log") {
		t.Fatalf("%v", err)
	}
}

// A kernel log with a pool's status: the kernel's disk has no serial (the
// sysfs of its machine is unknown), so nothing is joined by guess.
func TestEvalKernelWithStatus(t *testing.T) {
	as, err := evalAt([]string{"../testdata/zpool-status/freebsd-raidz1-gpt-label-online.txt", kernelLogs + "scsi-longhorn-1920-medium-error-dmesg-T.txt"}, config.DefaultRules(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Name == nameDiskIncident {
			t.Errorf("joined: %s", a.Summary)
		}
	}
}

// A hostile log stays bounded: a real I/O error line (from
// block-daplink-726-buffer-io-syslog.txt), derived into 200,000 lines about
// 100 disks, each two minutes after the last, so every line is a burst.
func TestEvalKernelBounded(t *testing.T) {
	data, err := os.ReadFile(kernelLogs + "block-daplink-726-buffer-io-syslog.txt")
	if err != nil {
		t.Fatal(err)
	}
	var real string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "I/O error, dev sda") {
			_, real, _ = strings.Cut(l, "] ")
			break
		}
	}
	if real == "" {
		t.Fatal("no I/O error line")
	}
	var b strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&b, "[%d.000000] %s\n", i*120, strings.Replace(real, "dev sda", fmt.Sprintf("dev sd%c%c", 'a'+i%10, 'a'+i/10%10), 1))
	}
	start := time.Now()
	envs, err := kernelEnvelopes("derived", []byte(b.String()), t0, kernelConfig.defaults)
	if err != nil {
		t.Fatal(err)
	}
	if max := maxEvalKernelRefs*maxEvalKernelBursts + 1; len(envs) > max {
		t.Errorf("%d facts, more than %d", len(envs), max)
	}
	e := newTestEngine()
	for _, env := range envs {
		if err := e.Observe(env, t0); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(kernelMemory.peek(e.hosts[EvalHost]).disks()); n > maxKernelDisks {
		t.Errorf("%d disks", n)
	}
	t.Logf("%d facts in %s", len(envs), time.Since(start))
}
