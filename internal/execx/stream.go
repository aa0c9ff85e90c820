package execx

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// StderrBound is how much of a streamed command's stderr is kept: enough
// for its error messages, never a flood held in memory.
const StderrBound = 64 << 10

// Stream runs name with args under the rules of this package (explicit argv,
// the runner's timeout killing the process group, one invocation per argv
// at a time) but hands stdout to read as it comes instead of collecting it:
// a listing of 50,000 snapshots is parsed line by line, never held whole.
// read must consume its reader to EOF or return an error; what it leaves
// unread is closed (the tool gets EPIPE). A killed tool that does not exit
// (stuck in the kernel) keeps its end of the pipe open, so Stream closes
// read's end under it a moment after the timeout. Stderr is kept up to
// StderrBound; the Result's Stdout is nil.
//
// The error is, first, a timeout (what read made of the cut-off stream
// must then be discarded); else read's own error, as it returned it; else
// the tool's failure (KindFailed, with its exit code and stderr, which
// callers may judge harmless: what read got is still whole).
func (r *Runner) Stream(ctx context.Context, read func(io.Reader) error, name string, args ...string) (Result, error) {
	argv, err := r.acquire(name, args)
	if err != nil {
		return Result{}, err
	}
	timeout := r.timeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	pr, pw, err := os.Pipe()
	if err != nil {
		cancel()
		r.release(argv)
		return Result{}, &Error{Kind: KindFailed, Command: argv, Err: fmt.Errorf("pipe: %w", err)}
	}
	cmd := r.command(cctx, name, args)
	stderr := &boundedBuffer{max: StderrBound}
	cmd.Stdout, cmd.Stderr = pw, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		cancel()
		r.release(argv)
		return Result{}, startError(argv, err)
	}
	pw.Close() // the child holds the write end now; EOF comes when it exits

	var closeOnce sync.Once
	closeRead := func() { closeOnce.Do(func() { pr.Close() }) }
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		r.release(argv)
		cancel()
		done <- err
	}()
	// Whatever holds the pipe past the kill (the tool stuck in the kernel,
	// a helper it forked out of its group), read returns by then.
	unblock := time.AfterFunc(timeout+killGrace, closeRead)
	readErr := read(pr)
	unblock.Stop()
	closeRead()
	if readErr != nil {
		cancel() // its output is no longer wanted
	}
	select {
	case werr := <-done:
		res := Result{Stderr: stderr.Bytes(), Duration: time.Since(start)}
		if cmd.ProcessState != nil {
			res.ExitCode = cmd.ProcessState.ExitCode()
		}
		switch {
		case cctx.Err() == context.DeadlineExceeded:
			return res, &Error{Kind: KindTimeout, Command: argv, Err: fmt.Errorf("no answer within %s; killed", timeout)}
		case readErr != nil:
			return res, readErr
		case werr != nil && ctx.Err() != nil:
			return res, ctx.Err()
		case werr != nil:
			return res, &Error{Kind: KindFailed, Command: argv, ExitCode: res.ExitCode, Stderr: string(res.Stderr), Err: werr}
		}
		return res, nil
	case <-waitGrace(cctx, timeout):
		res := Result{Stderr: stderr.Bytes(), Duration: time.Since(start)}
		if readErr != nil && cctx.Err() != context.DeadlineExceeded {
			return res, readErr
		}
		return res, &Error{Kind: KindTimeout, Command: argv, Err: fmt.Errorf("no answer within %s; killed but not exited (stuck in the kernel)", timeout)}
	}
}

// boundedBuffer keeps the first max bytes written to it and swallows the
// rest, so a chatty tool never blocks on its stderr nor fills memory.
type boundedBuffer struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := min(len(p), b.max-len(b.buf))
	b.buf = append(b.buf, p[:keep]...)
	b.lost += len(p) - keep
	return len(p), nil
}

// ReadFrom copies the tool's stderr pipe into the buffer. os/exec copies
// a non-file Stderr through io.Copy, which would otherwise take a 32 KiB
// buffer for each command run, several a minute, for a stderr that is
// almost always empty.
func (b *boundedBuffer) ReadFrom(r io.Reader) (int64, error) {
	var chunk [512]byte
	var n int64
	for {
		m, err := r.Read(chunk[:])
		if m > 0 {
			n += int64(m)
			_, _ = b.Write(chunk[:m])
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Bytes is what was kept, with a note of how much was not.
func (b *boundedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost == 0 {
		return b.buf
	}
	return fmt.Appendf(append([]byte(nil), b.buf...), "\n[%d more bytes of stderr not kept]\n", b.lost)
}
