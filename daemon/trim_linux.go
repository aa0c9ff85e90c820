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

// trimExecutableRSS stops the kernel from mapping the whole zwatch binary
// into memory. On a page fault in a file mapping Linux maps the
// neighbouring pages too ("fault-around"), so a 25 MB binary whose code is
// touched here and there at start-up ends up almost fully resident, though
// the daemon's working set is a fraction of it. Marking the executable's
// mappings MADV_RANDOM turns that off, and MADV_DONTNEED drops what start-up
// pulled in; the pages stay in the page cache and the ones the daemon uses
// fault back in singly. It changes only what RSS counts, never behaviour,
// so any error is ignored.
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
