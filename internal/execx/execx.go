// Package execx runs external tools (zpool, zfs, smartctl) the way a monitor
// must: explicit argv, never a shell; a context timeout after which the
// process is killed; and at most one outstanding invocation per command, so a
// tool stuck in uninterruptible sleep (a suspended pool, a dead controller)
// cannot pile up processes. A hang is reported, never waited on.
package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Error kinds, used as collector.error kinds and by rules.
const (
	KindTimeout = "timeout" // did not finish in time; killed
	KindBusy    = "busy"    // the previous invocation has still not exited
	KindMissing = "missing" // executable not found
	KindDenied  = "denied"  // permission denied
	KindFailed  = "failed"  // ran and exited non-zero
)

// Error describes a failed invocation.
type Error struct {
	Kind     string
	Command  string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Command, e.Kind)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		msg += ": " + s
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err, or "" when err is not an *Error.
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Result is a finished invocation. A non-zero exit is still a Result (with
// an *Error of KindFailed) because some tools (smartctl) report through it.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Duration time.Duration
}

// Runner runs commands with a default timeout. The zero value is not usable;
// call New.
type Runner struct {
	Timeout time.Duration
	// Env, when set, replaces the environment of children (tests point PATH
	// at stand-in tools).
	Env []string

	mu       sync.Mutex
	inflight map[string]struct{}
}

// New returns a Runner with the given default timeout.
func New(timeout time.Duration) *Runner {
	return &Runner{Timeout: timeout, inflight: map[string]struct{}{}}
}

// Run executes name with args and collects its stdout: Stream with a
// reader that keeps everything. The key for the one-outstanding rule is the
// whole argv.
func (r *Runner) Run(ctx context.Context, name string, args ...string) (Result, error) {
	var stdout bytes.Buffer
	res, err := r.Stream(ctx, func(out io.Reader) error {
		_, err := stdout.ReadFrom(out)
		return err
	}, name, args...)
	res.Stdout = stdout.Bytes()
	return res, err
}

// killGrace is how long a killed process is given to exit.
const killGrace = 2 * time.Second

// waitGrace fires a little after ctx ends, giving a killed process time to exit.
func waitGrace(ctx context.Context, timeout time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		<-ctx.Done()
		time.Sleep(killGrace)
		close(ch)
	}()
	return ch
}

// acquire claims argv for one invocation: KindBusy while the previous one
// has not exited.
func (r *Runner) acquire(name string, args []string) (string, error) {
	argv := strings.Join(append([]string{name}, args...), " ")
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, busy := r.inflight[argv]; busy {
		return "", &Error{Kind: KindBusy, Command: argv, Err: errors.New("previous invocation has not exited (process stuck, likely in the kernel)")}
	}
	r.inflight[argv] = struct{}{}
	return argv, nil
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout <= 0 {
		return 30 * time.Second
	}
	return r.Timeout
}

// command builds the child in its own process group, killed as a group
// when cctx ends: zpool may have forked helpers.
func (r *Runner) command(cctx context.Context, name string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(cctx, name, args...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
	cmd.WaitDelay = time.Second
	return cmd
}

func (r *Runner) release(argv string) {
	r.mu.Lock()
	delete(r.inflight, argv)
	r.mu.Unlock()
}

func startError(argv string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return &Error{Kind: KindMissing, Command: argv, Err: err}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, os.ErrPermission):
		return &Error{Kind: KindDenied, Command: argv, Err: err}
	}
	return &Error{Kind: KindFailed, Command: argv, Err: err}
}

// LookPath reports whether name can be found, with the reason when not.
func LookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", startError(name, err)
	}
	return p, nil
}
