//go:build linux

package daemon

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// trimExecutableRSS drops the zwatch binary's pages that start-up mapped.
// Start-up touches code here and there across the binary, and on a page
// fault in a file mapping Linux also maps the neighbouring pages that are
// in the page cache ("fault-around", 64 KB), so a 30 MB binary ends up
// mostly resident though the daemon's loop runs a fraction of it.
// MADV_DONTNEED drops them (they stay in the page cache); MADV_RANDOM stops
// read-ahead when a page has to be read from disk. Fault-around is not
// stopped by it: the pages the loop uses come back with their neighbours,
// so the binary's resident share grows again, to 19-23 MB after a few
// minutes on the stand-ins (docs/benchmarks.md). It changes only what is
// resident, never behaviour, so any error is ignored.
//
// The pages are not dropped from the page cache as well (fadvise
// DONTNEED): that took the binary's resident pages from 19-22 MB to 13-16 MB
// on the stand-ins, but the first incident after it would read its code
// back from disk a page at a time, seconds on a box whose root is a hard
// disk, and a page must not wait for that.
func trimExecutableRSS() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue // only the read-only, file-backed mappings of the binary
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// Raw syscalls: the range is the binary's own mapping, never Go memory.
		for _, advice := range []uintptr{unix.MADV_RANDOM, unix.MADV_DONTNEED} {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), advice)
		}
	}
}

// residentBytes is this process's resident set (the second field of
// /proc/self/statm, in pages).
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
