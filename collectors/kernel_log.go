package collectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/kernlog"
)

// KernelLogName is the kernel log follower's name in envelopes and logs.
const KernelLogName = "kernel_log"

// kmsgReadBuffer holds one /dev/kmsg record: each read(2) returns exactly
// one, and fails with EINVAL when the buffer is too small. The kernel caps a
// record, dictionary included, at 8 KiB (CONSOLE_EXT_LOG_MAX).
const kmsgReadBuffer = 16 << 10

// disksCollector is the disk inventory's poll, which a departed disk pokes.
const disksCollector = "disks"

// kmsgFix is what a person does when the kernel log cannot be read.
const kmsgFix = "run zwatch as root or grant CAP_SYSLOG; in a container mount /dev/kmsg"

// KernelLog follows the kernel's log device (/dev/kmsg) and publishes what
// the kernel says about disks, links and controllers as kernel.log facts:
// per disk, counts by kind, folded over a burst. It reads the records
// directly (no dmesg, no journal), starting after the newest at start-up:
// the boot's messages and yesterday's errors are not news.
type KernelLog struct {
	// Path is the log device, normally /dev/kmsg.
	Path string
	// Root is where sysfs and /dev/disk/by-id are read to name the disks
	// ("/" live).
	Root string
	// Urgent asks for the SMART of a disk the kernel just named, by kernel
	// name (nil: nobody to ask).
	Urgent func(target string)
	// DisksChanged is called when the kernel says a disk left (nil: nobody).
	DisksChanged func()
	Log          *slog.Logger
	// UserRecords also reads the records programs wrote to /dev/kmsg
	// (facility other than the kernel's). Off in the daemon, so that a
	// program's line is never taken for the kernel's; tests inject records
	// that way.
	UserRecords bool
	// Classify says what a message reports; nil is kernlog.Classify.
	Classify func(msg string) (kernlog.Finding, bool)
	// Quiet, Every and MaxPerSecond shape the facts (zero: the defaults
	// kernelQuiet, kernelEvery, kernelMaxPerSecond).
	Quiet, Every time.Duration
	MaxPerSecond int

	opened func(time.Time) // OnOpen
}

// Name is the collector name used in envelopes.
func (k *KernelLog) Name() string { return KernelLogName }

// OnOpen sets what Run calls once the log is open.
func (k *KernelLog) OnOpen(f func(time.Time)) { k.opened = f }

// Run follows the log until ctx ends. A log this process may not read, or
// that does not exist, is published once as a collector.error (the
// MonitoringBlindSpot rule says it with the fix) and Run then waits for ctx
// instead of failing again and again.
func (k *KernelLog) Run(ctx context.Context, pub Publisher) error {
	f, err := openKmsg(k.Path)
	if err != nil {
		ce, blind := kmsgBlindSpot(k.Path, err)
		if !blind {
			return err
		}
		k.log().Warn("cannot read the kernel log; disk, link and controller errors it reports are not seen", "path", k.Path, "err", err, "fix", kmsgFix)
		if perr := Publish(ctx, pub, facts.CollectorError, k.Name(), ce); perr != nil && ctx.Err() == nil {
			k.log().Error("publish collector error", "err", perr)
		}
		<-ctx.Done()
		return nil
	}
	if k.opened != nil {
		k.opened(time.Now())
	}
	fold := newKernelFold(ctx, k, pub)
	k.log().Debug("following the kernel log", "path", k.Path, "disks_mapped", fold.ports.m.Len())
	return k.follow(ctx, f, fold)
}

// openKmsg opens the log non-blocking, so that reads wait in Go's poller
// (where closing the file wakes them), positioned after the newest record.
func openKmsg(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if _, err := syscall.Seek(fd, 0, io.SeekEnd); err != nil {
		_ = syscall.Close(fd)
		return nil, &os.PathError{Op: "seek to the end of", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// kmsgBlindSpot turns "not allowed" and "not there" into the collector
// error a person can act on; other errors are not blind spots.
func kmsgBlindSpot(path string, err error) (facts.CollectorErrorData, bool) {
	var kind string
	switch {
	case errors.Is(err, fs.ErrPermission): // EACCES, EPERM (no CAP_SYSLOG)
		kind = execx.KindDenied
	case errors.Is(err, fs.ErrNotExist): // a container without /dev/kmsg
		kind = execx.KindMissing
	default:
		return facts.CollectorErrorData{}, false
	}
	return facts.CollectorErrorData{Collector: KernelLogName, Kind: kind, Target: path,
		Message: fmt.Sprintf("cannot read the kernel log: %v", err), Fix: kmsgFix}, true
}

// follow reads records from f into fold until ctx ends or a read fails.
func (k *KernelLog) follow(ctx context.Context, f *os.File, fold *kernelFold) error {
	defer f.Close()
	// Closing the file wakes the read waiting in the poller.
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	defer stop()
	defer fold.stop()
	buf := make([]byte, kmsgReadBuffer)
	for {
		n, err := f.Read(buf)
		switch {
		case err == nil:
			fold.record(buf[:n], time.Now())
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, syscall.EPIPE):
			// The kernel overwrote records before they were read; the
			// next read returns the oldest left, and the sequence gap
			// says how many were lost.
			fold.overrun()
		default:
			return fmt.Errorf("read %s: %w", k.Path, err)
		}
	}
}

func (k *KernelLog) log() *slog.Logger {
	if k.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.Log
}

// NewKernelLog builds the follower of the table from the config: it asks
// the SMART collector to read a disk the kernel names, and the disk
// inventory to look again when one leaves.
func NewKernelLog(e Env) *KernelLog {
	k := &KernelLog{Path: e.Config.Kernel.Kmsg, Root: "/", Log: e.Log}
	if e.Urgent != nil {
		k.Urgent = e.Urgent(SmartCollectorName)
	}
	if e.Poke != nil {
		k.DisksChanged = e.Poke(disksCollector)
	}
	return k
}
