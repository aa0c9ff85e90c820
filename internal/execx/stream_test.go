package execx

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// countLines is a read callback that counts lines to EOF.
func countLines(n *int) func(io.Reader) error {
	return func(r io.Reader) error {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			*n++
		}
		return sc.Err()
	}
}

func TestStreamHandsStdoutToTheReader(t *testing.T) {
	r := New(10 * time.Second)
	lines := 0
	res, err := r.Stream(context.Background(), countLines(&lines), script(t, `yes 'tank/data@autosnap_2026-11-30_00:00:01_daily	1764460801	0' | head -n 200000`))
	if err != nil || lines != 200000 || res.Stdout != nil || res.ExitCode != 0 {
		t.Fatalf("lines %d res %+v err %v", lines, res, err)
	}
}

func TestStreamFailureKeepsStderrAndWhatWasRead(t *testing.T) {
	r := New(5 * time.Second)
	lines := 0
	res, err := r.Stream(context.Background(), countLines(&lines), script(t, `echo a; echo b; echo "cannot open 'x': dataset does not exist" >&2; exit 1`))
	if KindOf(err) != KindFailed || res.ExitCode != 1 || lines != 2 || !strings.Contains(string(res.Stderr), "does not exist") {
		t.Fatalf("lines %d res %+v err %v", lines, res, err)
	}
}

func TestStreamStderrIsBounded(t *testing.T) {
	r := New(10 * time.Second)
	lines := 0
	res, err := r.Stream(context.Background(), countLines(&lines), script(t, `head -c 1000000 /dev/zero | tr '\0' e >&2; echo done`))
	if err != nil || lines != 1 {
		t.Fatalf("lines %d err %v", lines, err)
	}
	if n := len(res.Stderr); n > StderrBound+100 || !strings.Contains(string(res.Stderr), "more bytes of stderr not kept") {
		t.Fatalf("kept %d bytes of stderr", n)
	}
}

func TestStreamTimeoutKillsTheTool(t *testing.T) {
	r := New(300 * time.Millisecond)
	lines := 0
	start := time.Now()
	_, err := r.Stream(context.Background(), countLines(&lines), script(t, `echo first; sleep 60 & sleep 60`))
	if KindOf(err) != KindTimeout || lines != 1 {
		t.Fatalf("lines %d err %v", lines, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

// A tool that outlives its kill keeps the pipe open; here a child that left
// the process group (setsid) stands in for one stuck in the kernel. The
// reader must still return.
func TestStreamReturnsWhenThePipeOutlivesTheKill(t *testing.T) {
	r := New(300 * time.Millisecond)
	lines := 0
	start := time.Now()
	_, err := r.Stream(context.Background(), countLines(&lines), script(t, `echo first; setsid sleep 20 & sleep 60`))
	if KindOf(err) != KindTimeout {
		t.Fatalf("err %v, want a timeout", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("took %v: the reader waited on the pipe", d)
	}
}

func TestStreamReaderErrorStopsTheTool(t *testing.T) {
	r := New(30 * time.Second)
	bad := errors.New("line 1: 2 fields, want 3")
	start := time.Now()
	_, err := r.Stream(context.Background(), func(io.Reader) error { return bad }, script(t, `while :; do echo x; done`))
	if !errors.Is(err, bad) {
		t.Fatalf("err %v, want the reader's", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestStreamOneOutstandingAndMissing(t *testing.T) {
	r := New(time.Minute)
	tool := script(t, `sleep 2`)
	done := make(chan error)
	go func() { _, err := r.Stream(context.Background(), countLines(new(int)), tool); done <- err }()
	time.Sleep(300 * time.Millisecond)
	if _, err := r.Stream(context.Background(), countLines(new(int)), tool); KindOf(err) != KindBusy {
		t.Fatalf("second call: %v, want busy", err)
	}
	if _, err := r.Run(context.Background(), tool); KindOf(err) != KindBusy {
		t.Fatalf("Run of the same argv: %v, want busy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stream(context.Background(), countLines(new(int)), "/nonexistent/zfs"); KindOf(err) != KindMissing {
		t.Fatalf("missing: %v", err)
	}
}

// os/exec copies a non-file Stderr with io.Copy: boundedBuffer's ReadFrom
// keeps that copy to a small buffer, and keeps the bound and the read error.
func TestBoundedBufferReadFrom(t *testing.T) {
	var _ io.ReaderFrom = (*boundedBuffer)(nil)
	b := &boundedBuffer{max: 1000}
	n, err := b.ReadFrom(strings.NewReader(strings.Repeat("e", 2500)))
	if err != nil || n != 2500 || len(b.buf) != 1000 || b.lost != 1500 {
		t.Fatalf("n %d err %v kept %d lost %d", n, err, len(b.buf), b.lost)
	}
	broken := errors.New("read |0: file already closed")
	if _, err := b.ReadFrom(io.MultiReader(strings.NewReader("x"), iotestErr{broken})); !errors.Is(err, broken) {
		t.Fatalf("read error: %v", err)
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// BenchmarkRun is one short command run and collected, as a collector's
// poll runs zpool: what it allocates besides the tool's output.
func BenchmarkRun(b *testing.B) {
	tool, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	r := New(10 * time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(context.Background(), tool); err != nil {
			b.Fatal(err)
		}
	}
}
