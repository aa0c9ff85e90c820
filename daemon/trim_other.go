//go:build !linux

package daemon

// trimExecutableRSS is Linux-only; elsewhere the kernel's accounting differs.
func trimExecutableRSS() {}
