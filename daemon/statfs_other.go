//go:build !(linux || freebsd || darwin)

package daemon

import (
	"fmt"
	"runtime"
)

// freeBytes is not known on this OS; storage alerts then say so.
func freeBytes(dir string) (uint64, error) {
	return 0, fmt.Errorf("free space of %s: not supported on %s", dir, runtime.GOOS)
}
