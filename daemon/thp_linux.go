//go:build linux

package daemon

import "golang.org/x/sys/unix"

// disableHugePages opts this process out of transparent huge pages. With
// THP "always" (Debian's kernels) the kernel backs the Go heap's sparsely
// used arena with 2 MiB pages, at a fault or later from khugepaged, which
// by default collapses a 2 MiB range with a single page in use: a heap of
// a few MB then holds several MB more, varying from run to run. Go's GC
// guide says as much; the daemon gains nothing from huge pages. The flag
// is inherited by zpool and smartctl, which are short-lived.
func disableHugePages() error {
	return unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0)
}
