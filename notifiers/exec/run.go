package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// outputKept is how much of the program's stdout and stderr (each, the last
// bytes) is kept for the error message: its last words, never a flood.
const outputKept = 4 << 10

// envTextMax bounds ZWATCH_TEXT: the kernel refuses a single environment
// string over 128 KiB, and stdin carries the whole text anyway.
const envTextMax = 32 << 10

// waitDelay is how long a finished or killed program's output pipes are
// waited for, in case something outside its process group still holds them.
const waitDelay = time.Second

// Kinds of RunError.
const (
	KindMissing  = "missing"  // the program (or its #! interpreter) does not exist
	KindDenied   = "denied"   // not executable, or a directory
	KindFormat   = "format"   // not a program the kernel can run
	KindTimeout  = "timeout"  // killed when its time was up
	KindFailed   = "failed"   // exited with a status other than 0
	KindSignal   = "signal"   // killed by a signal it did not get from zwatch
	KindCanceled = "canceled" // zwatch stopped while it ran
	KindStart    = "start"    // could not be started for another reason
)

// RunError is a run that did not deliver. Its text holds the program's last
// output with the channel's env values masked.
type RunError struct {
	Kind     string
	Program  string
	ExitCode int
	// Output is the tail of stderr, or of stdout when stderr was empty.
	Output string
	// Limit is the bound that killed it, and LimitKey the key that set it.
	Limit    time.Duration
	LimitKey string
	Err      error
}

func (e *RunError) Error() string {
	var what string
	switch e.Kind {
	case KindFailed:
		what = fmt.Sprintf("exited with status %d", e.ExitCode)
	case KindTimeout:
		what = fmt.Sprintf("did not finish within %s (%s); killed with its process group", e.Limit, e.LimitKey)
	case KindCanceled:
		what = "stopped: zwatch is shutting down"
	default:
		what = "cannot run: " + e.Err.Error()
		if e.Kind == KindSignal {
			what = e.Err.Error()
		}
	}
	s := e.Program + " " + what
	if e.Output != "" {
		s += ": " + e.Output
	}
	return s
}

func (e *RunError) Unwrap() error { return e.Err }

// Send runs the program with m on stdin and in its environment. Only exit
// status 0 is a delivery; anything else is an error the outbox retries.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	stdin, err := json.Marshal(channel.NewPayload(m))
	if err != nil {
		return fmt.Errorf("exec: marshal payload: %w", err)
	}
	limit, limitKey := s.timeout, "timeout"
	if !s.ownTimeout {
		limitKey = "notify.send_timeout"
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < limit {
		// The caller's bound (notify.send_timeout) comes first.
		limit, limitKey = max(time.Until(dl), 0), "notify.send_timeout"
		if s.ownTimeout && s.timeout > s.sendTimeout {
			limitKey = fmt.Sprintf("notify.send_timeout, which caps timeout %s", s.timeout)
		}
		limit = limit.Round(time.Millisecond)
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	cmd := osexec.CommandContext(rctx, s.argv[0], s.argv[1:]...)
	cmd.Env = append(slices.Clone(s.env), Environment(m)...)
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &tail{max: outputKept}, &tail{max: outputKept}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Its own process group, so a timeout kills the helpers it forked too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay

	runErr := cmd.Run()
	// A delivery is over when the program exits: what it left running in
	// its group goes with it.
	_ = killGroup(cmd)

	e := &RunError{Program: s.argv[0], Err: runErr}
	e.Output = lastWords(stderr.String(), stdout.String(), s.secrets)
	var exit *osexec.ExitError
	switch {
	case cmd.Process == nil:
		e.Kind, e.Output = startKind(runErr), ""
	case runErr == nil, errors.Is(runErr, osexec.ErrWaitDelay) && cmd.ProcessState.Success():
		return nil
	case rctx.Err() == context.DeadlineExceeded && ctx.Err() != context.Canceled:
		e.Kind, e.Limit, e.LimitKey = KindTimeout, limit, limitKey
	case ctx.Err() == context.Canceled:
		e.Kind = KindCanceled
	case errors.As(runErr, &exit) && exit.ExitCode() >= 0:
		e.Kind, e.ExitCode = KindFailed, exit.ExitCode()
	case errors.As(runErr, &exit):
		e.Kind = KindSignal
		e.Err = fmt.Errorf("was killed by a signal (%s)", exit.ProcessState)
	default:
		e.Kind = KindFailed
	}
	return channel.Redact(e, s.secrets...)
}

// killGroup kills the program's process group, if it still has members.
func killGroup(cmd *osexec.Cmd) error {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return nil
}

// startKind names why the program could not be started.
func startKind(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return KindMissing
	case errors.Is(err, fs.ErrPermission):
		return KindDenied
	case errors.Is(err, syscall.ENOEXEC):
		return KindFormat
	}
	return KindStart
}

// lastWords is the end of what the program said (stderr, or stdout when
// stderr is empty) on one line, at most outputKept bytes, secrets masked.
func lastWords(stderr, stdout string, secrets []string) string {
	out := strings.TrimSpace(stderr)
	if out == "" {
		out = strings.TrimSpace(stdout)
	}
	for _, sec := range secrets {
		if len(sec) >= 4 {
			out = strings.ReplaceAll(out, sec, "******")
		}
	}
	out = strings.ReplaceAll(out, "\n", " | ")
	if len(out) > outputKept {
		// Keep the end, from a whole character on.
		cut := len(out) - outputKept
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = "…" + strings.TrimPrefix(out[cut:], "…")
	}
	return out
}

// tail keeps the last max bytes written to it, marking what it dropped.
type tail struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.buf), "")
	if t.dropped {
		s = "…" + s
	}
	return s
}

// Hint names the cure for a run that failed.
func (s *Sender) Hint(err error) string {
	var e *RunError
	if !errors.As(err, &e) {
		return ""
	}
	switch e.Kind {
	case KindMissing:
		if _, statErr := os.Stat(e.Program); statErr == nil {
			return fmt.Sprintf("%s exists, but the interpreter on its #! line does not: fix that line (e.g. #!/bin/sh)", e.Program)
		}
		return fmt.Sprintf("%s does not exist on this machine: install it there, or fix command[0]", e.Program)
	case KindDenied:
		return fmt.Sprintf("%s is not executable by zwatch's user: chmod 755 %s (and check its directories)", e.Program, e.Program)
	case KindFormat:
		return fmt.Sprintf("%s is not a program the kernel can run: a script needs a first line like #!/bin/sh", e.Program)
	case KindTimeout:
		return "the program took too long: make it return once the message is handed over, or raise timeout (at most notify.send_timeout)"
	case KindFailed, KindSignal:
		return "the program reported a failure (its last output is in the error): fix what it says, then try again with zwatch notify test --channel <name>"
	}
	return ""
}

// Environment is the ZWATCH_* variables for m (docs/notifications.md lists
// them).
func Environment(m channel.Message) []string {
	test := "false"
	if m.Test {
		test = "true"
	}
	var names, pools []string
	for _, a := range m.Notification.Alerts {
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
		pool := a.Labels["pool"]
		if pool == "" && a.Replacement != nil {
			pool = a.Replacement.Pool
		}
		if pool != "" && !slices.Contains(pools, pool) {
			pools = append(pools, pool)
		}
	}
	created := ""
	if !m.Created.IsZero() {
		created = m.Created.UTC().Format(time.RFC3339)
	}
	// No value can hold a NUL byte; a stray one must not stop the run.
	v := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	return []string{
		"ZWATCH_VERSION=1",
		"ZWATCH_ID=" + v(m.ID),
		"ZWATCH_GROUP_KEY=" + v(m.Notification.GroupKey),
		"ZWATCH_HOST=" + v(m.Host),
		"ZWATCH_STATUS=" + m.Status(),
		"ZWATCH_SEVERITY=" + v(string(m.Severity)),
		"ZWATCH_TEST=" + test,
		"ZWATCH_CREATED=" + created,
		"ZWATCH_TITLE=" + v(m.Title),
		"ZWATCH_SUMMARY=" + v(m.Summary),
		"ZWATCH_TEXT=" + v(channel.CutBytes(m.Text, envTextMax)),
		"ZWATCH_ALERTS=" + v(strings.Join(names, " ")),
		"ZWATCH_ALERT_COUNT=" + fmt.Sprint(len(m.Notification.Alerts)),
		"ZWATCH_POOLS=" + v(strings.Join(pools, " ")),
	}
}
