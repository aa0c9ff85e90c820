package provision

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
)

// benchHost stands in for zfs: datasets are directories in a temp dir, so
// the measurement itself (writes, fsync, reads) runs for real on them.
type benchHost struct {
	dir      string
	calls    [][]string
	failOn   string // a dataset whose create fails
	datasets map[string]string
	syncs    int
	poolEnc  string // the pool root's encryption property; "" is off
}

func (h *benchHost) Root() string                                { return "/" }
func (h *benchHost) ReadFile(string) ([]byte, error)             { return nil, fs.ErrNotExist }
func (h *benchHost) WriteFile(string, []byte, fs.FileMode) error { return nil }
func (h *benchHost) Run(_ context.Context, argv []string) (execx.Result, error) {
	h.calls = append(h.calls, argv)
	last := argv[len(argv)-1]
	switch {
	case argv[0] == "zpool" && argv[1] == "list":
		return execx.Result{Stdout: []byte(last + "\n")}, nil
	case argv[0] == "zpool" && argv[1] == "sync":
		h.syncs++
		return execx.Result{}, nil
	case argv[1] == "create":
		if last == h.failOn {
			return execx.Result{}, &execx.Error{Kind: execx.KindFailed, Command: strings.Join(argv, " "), Err: errors.New("exit status 1")}
		}
		d := filepath.Join(h.dir, strings.ReplaceAll(last, "/", "_"))
		h.datasets[last] = d
		return execx.Result{}, os.Mkdir(d, 0o755)
	case argv[1] == "get" && argv[len(argv)-2] == "mountpoint":
		return execx.Result{Stdout: []byte(h.datasets[last] + "\n")}, nil
	case argv[1] == "get" && argv[len(argv)-2] == "encryption":
		if h.poolEnc == "" {
			return execx.Result{Stdout: []byte("off\n")}, nil
		}
		return execx.Result{Stdout: []byte(h.poolEnc + "\n")}, nil
	case argv[1] == "get" && argv[len(argv)-2] == "compressratio":
		return execx.Result{Stdout: []byte("1.00x\n")}, nil
	case argv[1] == "destroy":
		delete(h.datasets, last)
		return execx.Result{}, nil
	}
	return execx.Result{}, errors.New("unexpected " + strings.Join(argv, " "))
}

func TestBenchMeasuresEverySettingAndCleansUp(t *testing.T) {
	h := &benchHost{dir: t.TempDir(), datasets: map[string]string{}}
	var out bytes.Buffer
	rs, err := Bench(context.Background(), BenchOptions{Pool: "vault", Size: 4 << 20, Encryption: true, Out: &out, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 16 {
		t.Fatalf("%d results, want 4 compressions × 2 (encrypted or not) × 2 data kinds", len(rs))
	}
	for _, r := range rs {
		if r.WriteMBps <= 0 || r.ReadMBps <= 0 {
			t.Errorf("no throughput measured: %+v", r)
		}
	}
	if len(h.datasets) != 0 {
		t.Errorf("temporary datasets left: %v", h.datasets)
	}
	if h.syncs != 16 {
		t.Errorf("%d zpool syncs, want one before each compressratio read (16)", h.syncs)
	}
	var creates int
	for _, c := range h.calls {
		if c[1] != "create" {
			continue
		}
		creates++
		line := strings.Join(c, " ")
		for _, want := range []string{"recordsize=1M", "primarycache=metadata", "vault/zwatch-bench-"} {
			if !strings.Contains(line, want) {
				t.Errorf("%q lacks %s", line, want)
			}
		}
		if strings.HasSuffix(line, "-aes") && !strings.Contains(line, "encryption=aes-256-gcm") {
			t.Errorf("encrypted dataset without encryption: %q", line)
		}
	}
	if creates != 8 {
		t.Errorf("%d datasets created, want 8", creates)
	}
	for _, want := range []string{"compression  encrypted", "zstd-3", "Recommended: compression=", "Recommended (encrypted datasets)", "55 % efficiency"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Found by make e2e: on a pool made with `provision --encrypt` every
// dataset inherits encryption, so "encrypted: no" rows were encrypted too.
func TestBenchOnEncryptedPoolMeasuresEncryptedOnly(t *testing.T) {
	h := &benchHost{dir: t.TempDir(), datasets: map[string]string{}, poolEnc: "aes-256-gcm"}
	var out bytes.Buffer
	rs, err := Bench(context.Background(), BenchOptions{Pool: "safe", Size: 1 << 20, Encryption: true, Out: &out, Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Fatalf("%d results, want 4 compressions × 2 data kinds, all encrypted", len(rs))
	}
	for _, r := range rs {
		if !r.Encrypted {
			t.Errorf("a row says unencrypted on an encrypted pool: %+v", r)
		}
	}
	for _, c := range h.calls {
		if c[1] == "create" && strings.Contains(strings.Join(c, " "), "encryption=") {
			t.Errorf("a bench dataset got its own key instead of the pool's: %q", c)
		}
	}
	for _, want := range []string{"root dataset is encrypted (aes-256-gcm)", "Recommended (encrypted datasets)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), " no ") {
		t.Errorf("table has an unencrypted row:\n%s", out.String())
	}
}

func TestBenchDestroysOnFailure(t *testing.T) {
	h := &benchHost{dir: t.TempDir(), datasets: map[string]string{}, failOn: "vault/zwatch-bench-lz4"}
	_, err := Bench(context.Background(), BenchOptions{Pool: "vault", Size: 1 << 20, Out: &bytes.Buffer{}, Host: h})
	if err == nil || !strings.Contains(err.Error(), "vault/zwatch-bench-lz4") {
		t.Fatalf("err = %v", err)
	}
	if len(h.datasets) != 0 {
		t.Errorf("temporary datasets left after a failure: %v", h.datasets)
	}
}

func TestBenchAdvice(t *testing.T) {
	rs := []BenchResult{
		{Compression: "off", Data: dataIncompressible, WriteMBps: 300, ReadMBps: 400, Ratio: 1},
		{Compression: "lz4", Data: dataIncompressible, WriteMBps: 290, ReadMBps: 390, Ratio: 1},
		{Compression: "zstd-3", Data: dataIncompressible, WriteMBps: 90, ReadMBps: 380, Ratio: 1},
		{Compression: "lz4", Data: dataMixed, WriteMBps: 400, ReadMBps: 500, Ratio: 1.6},
		{Compression: "zstd-1", Data: dataMixed, WriteMBps: 250, ReadMBps: 450, Ratio: 2.1},
		{Compression: "zstd-3", Data: dataMixed, WriteMBps: 100, ReadMBps: 420, Ratio: 2.3},
	}
	adv := strings.Join(benchAdvice(rs, 118), "\n")
	for _, want := range []string{
		"compression=lz4 for photos",
		"compression=zstd-1 for documents and backups (2.10x",
		"WARN: compression=zstd-3 on incompressible data runs at 90 MB/s",
		"WARN: compression=zstd-3 on mixed data runs at 100 MB/s",
	} {
		if !strings.Contains(adv, want) {
			t.Errorf("advice lacks %q:\n%s", want, adv)
		}
	}
}
