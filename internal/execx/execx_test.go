package execx

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunOutputAndExitCode(t *testing.T) {
	r := New(5 * time.Second)
	res, err := r.Run(context.Background(), script(t, `echo out; echo err >&2; exit 3`))
	if KindOf(err) != KindFailed || res.ExitCode != 3 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Fatalf("res %+v err %v", res, err)
	}
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	r := New(200 * time.Millisecond)
	tool := script(t, `sleep 60 & sleep 60`)
	start := time.Now()
	_, err := r.Run(context.Background(), tool)
	if KindOf(err) != KindTimeout {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestOneOutstandingInvocation(t *testing.T) {
	r := New(time.Minute)
	tool := script(t, `sleep 2`)
	done := make(chan error)
	go func() { _, err := r.Run(context.Background(), tool); done <- err }()
	time.Sleep(300 * time.Millisecond)
	if _, err := r.Run(context.Background(), tool); KindOf(err) != KindBusy {
		t.Fatalf("second call: %v, want busy", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), tool); err != nil {
		t.Fatalf("after the first finished: %v", err)
	}
}

func TestMissingAndDenied(t *testing.T) {
	r := New(time.Second)
	if _, err := r.Run(context.Background(), filepath.Join(t.TempDir(), "nope")); KindOf(err) != KindMissing {
		t.Fatalf("missing: %v", err)
	}
	p := filepath.Join(t.TempDir(), "noexec")
	os.WriteFile(p, []byte("#!/bin/sh\n"), 0o644)
	if _, err := r.Run(context.Background(), p); KindOf(err) != KindDenied {
		t.Fatalf("not executable: %v", err)
	}
}
