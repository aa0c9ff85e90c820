//go:build !linux

package daemon

// disableHugePages: transparent huge pages are Linux's.
func disableHugePages() error { return nil }
