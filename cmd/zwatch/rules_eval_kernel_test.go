package main

import (
	"strings"
	"testing"
)

// A saved kernel log from a real failure, pasted into rules eval, pages as
// the follower would: the disk named as the kernel named it.
func TestRulesEvalKernelLog(t *testing.T) {
	for file, want := range map[string]string{
		"scsi-longhorn-1920-medium-error-dmesg-T.txt": "KernelDiskErrors",
		"usb-bb-qq-uas-3-reset-not-accepting.txt":     "usb 2-1.2",
	} {
		out, errOut, code := run(t, "rules", "eval", "../../testdata/kernel-log/"+file)
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, want %q in:\n%s%s", file, code, want, out, errOut)
		}
	}
}
