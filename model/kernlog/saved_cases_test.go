package kernlog

import (
	"os"
	"path/filepath"
	"testing"
)

// The expected findings were counted by reading each file, line by line. A
// failed SCSI command is one finding on its "Sense Key" line (its "FAILED
// Result: hostbyte=DID_OK" and "Add. Sense" lines say the same again).
var savedCases = []savedCase{
	{"libata-debian-buffalo-203-ata-bus-error.txt", FormatDmesg, 12, map[string]int{
		"command_failed ata1.00": 4,
	}},
	{"libata-storage-monitoring-4-timeout-reset.txt", FormatDmesg, 20, map[string]int{
		"command_failed ata1.00": 4, "link_reset ata1": 1,
	}},
	{"libata-sunxi-24-serror-interface.txt", FormatDmesg, 15, map[string]int{
		"command_failed ata1.00": 1, "link_reset ata1": 1, "link_error ata1": 1,
	}},
	{"libata-meta-sunxi-110-link-slow-down.txt", FormatDmesg, 22, map[string]int{
		"link_slow ata1": 2, "link_reset ata1": 3, "link_down ata1": 1,
	}},
	{"libata-tlp-130-syslog-timeout.txt", FormatSyslog, 13, map[string]int{
		"command_failed ata1.00": 4,
	}},
	{"libata-buffalo-161-pmp-abrt.txt", FormatDmesg, 21, map[string]int{
		"command_failed ata1.00": 1, "link_reset ata1.00": 1,
	}},
	{"scsi-longhorn-1920-medium-error-dmesg-T.txt", FormatDmesgTime, 11, map[string]int{
		"medium_error sde": 5,
	}},
	{"scsi-openebs-1433-medium-error-write-syslog.txt", FormatSyslog, 11, map[string]int{
		"medium_error sdb": 3, "buffer_io_error sdb": 3,
	}},
	{"scsi-longhorn-13420-medium-error-syslog.txt", FormatSyslog, 9, map[string]int{
		"medium_error sdb": 3, "buffer_io_error sdb": 1,
	}},
	{"uas-rpi-linux-5060-abort.txt", FormatDmesg, 18, map[string]int{
		"command_failed sdd": 1, "command_failed sdc": 1,
	}},
	{"uas-rpi-linux-3814-abort-reset-quoted.txt", FormatDmesg, 15, map[string]int{
		"command_failed sda": 6, "link_reset scsi host0": 1, "link_reset usb 2-1.4": 1,
	}},
	{"usb-bb-qq-uas-3-reset-not-accepting.txt", FormatDmesg, 20, map[string]int{
		"link_error usb 2-1.2": 1, "link_reset usb 2-1.2": 4,
	}},
	{"usb-tobetter-11-disconnect.txt", FormatDmesg, 22, map[string]int{
		"gone usb 3-1.1": 1, "gone usb 4-1": 1, "link_reset usb 3-1": 1,
	}},
	{"nvme-nvme-cli-151-timeout-removing.txt", FormatDmesg, 10, map[string]int{
		"timeout nvme2": 1, "link_down nvme2": 2, "gone nvme2": 1,
		"timeout nvme3": 1, "link_down nvme3": 2, "gone nvme3": 1,
	}},
	{"nvme-bspwr-blog-990pro-not-ready-io-error.txt", FormatDmesg, 7, map[string]int{
		"link_down nvme0": 2, "io_error nvme0n1": 4,
	}},
	{"block-appstream-107-print-req-error-journal.txt", FormatJournal, 4, map[string]int{
		"io_error sdc": 4,
	}},
	{"block-crucible-408-blk-update-nvme-console.txt", FormatDmesg, 3, map[string]int{
		"io_error nvme1n1": 3,
	}},
	{"block-longhorn-12470-dmesg-x-delta-ctime.txt", FormatDmesgTime, 8, map[string]int{
		"io_error sda": 3, "command_failed sda": 1,
	}},
	{"block-daplink-726-buffer-io-syslog.txt", FormatSyslog, 11, map[string]int{
		"io_error sda": 2, "buffer_io_error sda": 6,
	}},
	{"kmsg-udisks-1231-nvme-fabrics.txt", FormatKmsg, 4, map[string]int{}},
	{"scsi-hotsos-631-aborted-command-journal.txt", FormatJournal, 6, map[string]int{
		"io_error sdh": 1, "command_failed sdh": 1,
	}},
	{"usb-deepin-940-usb-storage-probe-syslog.txt", FormatSyslog, 12, map[string]int{}},
	{"libata-zfs-1814-unc-media-error.txt", FormatDmesg, 22, map[string]int{
		"command_failed ata3.00": 3, "medium_error ata3.00": 2,
	}},
	{"libata-sunxi-41-priority-prefix-limiting-speed.txt", FormatPlain, 11, map[string]int{
		"link_error ata1": 1, "link_reset ata1": 1, "link_down ata1": 1,
	}},
	{"scsi-util-linux-1220-critical-target-kernel-prefix.txt", FormatJournal, 12, map[string]int{
		// Illegal Request (a read past the chip's end) is not the disk's health.
		"buffer_io_error sdb": 2, "target_error sdb": 2,
	}},
	{"usb-dietpi-4499-timeout-disconnect.txt", FormatDmesg, 11, map[string]int{
		"io_error sda": 4, "timeout sda": 3, "gone usb 2-2": 1,
	}},
	{"usb-dietpi-6071-reset-journal.txt", FormatJournal, 8, map[string]int{
		"link_reset usb 1-1.4": 1, "timeout sdb": 1, "io_error sdb": 1, "buffer_io_error sdb": 1,
	}},
	{"libata-bbf-29-hostint-10b8b-unc.txt", FormatDmesg, 12, map[string]int{
		"link_error ata1": 1, "command_failed ata1.00": 2, "medium_error ata1.00": 1, "link_reset ata1": 1,
	}},
	{"libata-hd-idle-78-linkseq-localized-dmesg-T.txt", FormatDmesgTime, 16, map[string]int{
		"link_error ata2": 1, "command_failed ata2.00": 2, "link_reset ata2": 1,
	}},
	{"libata-zfs-15646-read-dma-ext-abrt-dmesg-T.txt", FormatDmesgTime, 18, map[string]int{
		// "Unaligned write command" (Illegal Request) is not a finding.
		"command_failed ata10.00": 1, "link_reset ata10": 1,
	}},
	{"libata-raspberry-pcie-116-link-down-ffffffff.txt", FormatDmesg, 14, map[string]int{
		"link_down ata23": 1,
	}},
	{"nvme-ahmedalsawi-blog-6x-timeout-tag-opcode.txt", FormatDmesg, 8, map[string]int{
		"timeout nvme0": 2,
	}},
	{"nvme-sedutil-507-lba-error-hexdump-interleaved.txt", FormatDmesg, 11, map[string]int{
		"medium_error nvme0n1": 8, "buffer_io_error nvme0n1": 3,
	}},
	{"usb-asuswrt-379-reset-offline-no-host-syslog.txt", FormatJournal, 16, map[string]int{
		"link_reset usb 2-2": 7, "link_down scsi 0:0:0:0": 1, "command_failed sdd": 2,
		"io_error sdd": 1, "io_error scsi 0:0:0:0": 2, "buffer_io_error sdd": 1,
	}},
	{"uas-dietpi-4499-reset-failed-offlined.txt", FormatDmesg, 16, map[string]int{
		"command_failed sda": 1, "link_reset scsi host1": 1, "link_reset usb 2-2": 1,
		"link_down scsi 1:0:0:0": 10,
	}},
	{"sas-zfs-574-task-abort-no-stamps.txt", FormatPlain, 1, map[string]int{
		"timeout scsi 4:0:1:0": 1,
	}},
	{"sas-zfs-7859-task-abort-zio-errors.txt", FormatDmesg, 14, map[string]int{
		"timeout scsi 12:0:0:0": 2,
	}},
	{"sas-zfs-9716-aborted-command-descriptor-dmesg-T.txt", FormatDmesgTime, 3, map[string]int{
		"io_error sdp": 1, "command_failed sdv": 1,
	}},
	{"scsi-longhorn-12470-offlined-dmesg-x-reltime.txt", FormatDmesgTime, 9, map[string]int{
		"link_down scsi 2:0:0:1": 6,
	}},
	{"scsi-longhorn-9878-offline-short-precise.txt", FormatJournal, 11, map[string]int{
		"io_error scsi 15:0:0:1": 1, "io_error scsi 35:0:0:1": 1, "buffer_io_error sdaj": 8,
	}},
	{"nvme-rpi-linux-6661-controller-down-journal.txt", FormatJournal, 14, map[string]int{
		"link_down nvme0": 2,
	}},
	{"block-rpi-linux-703-end-request-split-result.txt", FormatJournal, 10, map[string]int{
		"io_error sda": 1,
	}},
	// Only the disk lines are taken from a diff's "+[…]" lines.
	{"block-xcp-ng-27-print-req-error-diff.txt", FormatDmesg, 8, map[string]int{
		"io_error nvme1n1": 8,
	}},
	{"scsi-dcache-1708-medium-access-timeout-hpsa.txt", FormatJournal, 7, map[string]int{
		"timeout sdb": 1,
	}},
	{"libata-dentos-308-disabled-indented.txt", FormatDmesg, 18, map[string]int{
		"link_reset ata1": 4, "link_slow ata1": 1, "link_error ata1": 1, "link_down ata1.00": 1,
	}},
	// Lines wrapped by the report: the first half still names the port.
	{"libata-sma-bluetooth-70-wrapped-syslog.txt", FormatSyslog, 4, map[string]int{
		"link_error ata2": 1, "link_reset ata2": 1, "link_down ata2": 1,
	}},
	{"libata-sof-test-1106-comreset-short-monotonic.txt", FormatJournal, 3, map[string]int{
		"link_reset ata2": 3,
	}},
	{"libata-sof-test-893-abrt-journal-continuation.txt", FormatJournal, 9, map[string]int{
		"command_failed ata1.00": 2,
	}},
	{"usb-rpi-linux-3543-disconnect-descriptor-errors.txt", FormatDmesg, 18, map[string]int{
		"io_error sda": 3, "gone usb 1-1.3": 1, "buffer_io_error sda": 2, "link_error usb 1-1.3": 4,
	}},
	// dmesg -t: only the lines about a device are read, not the prompt or
	// the hub port's.
	{"usb-dasharo-1132-dmesg-t-with-prompt.txt", FormatPlain, 12, map[string]int{
		"link_error usb 2-1.1": 12,
	}},
	{"scsi-hotsos-368-medium-error-write16-task-abort.txt", FormatDmesg, 7, map[string]int{
		"medium_error sdk": 2, "timeout scsi 0:0:9:0": 1,
	}},
	{"block-rpi-linux-383-end-request-target-split-lines.txt", FormatDmesg, 31, map[string]int{
		"target_error sdc": 3, "buffer_io_error sdc": 1,
	}},
	{"libata-buffalo-203-10b8b-dispar.txt", FormatDmesg, 17, map[string]int{
		"link_down ata1": 1, "link_error ata1": 1, "command_failed ata1.00": 2,
	}},
}

func TestSavedRealLogs(t *testing.T) {
	for _, c := range savedCases {
		t.Run(c.file, func(t *testing.T) { checkSavedCase(t, c) })
	}
}

// TestEveryRealLogHasACase keeps a file added to testdata/kernel-log from
// going untested.
func TestEveryRealLogHasACase(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "testdata", "kernel-log"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range savedCases {
		known[c.file] = true
	}
	for _, e := range entries {
		if name := e.Name(); name != "SOURCES.md" && !known[name] {
			t.Errorf("%s has no case in savedCases", name)
		}
	}
}
