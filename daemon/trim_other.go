//go:build !linux

package daemon

// trimExecutableRSS is Linux-only; elsewhere the kernel's accounting differs.
func trimExecutableRSS() {}

// residentBytes is not read elsewhere: the settler then only trims at start.
func residentBytes() (int64, bool) { return 0, false }
