//go:build linux || freebsd || darwin

package daemon

import (
	"fmt"
	"syscall"
)

// freeBytes is the space left to an unprivileged writer on dir's filesystem.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
