// Package kernlog reads the Linux kernel log: records of /dev/kmsg, saved
// logs (dmesg, dmesg -T, journalctl -k, journalctl -k -o json, raw kmsg
// lines), and what their messages say about disks, links and controllers.
package kernlog

import "time"

// Record is one kernel log record.
type Record struct {
	// Priority is the syslog level (0 emerg … 7 debug); -1 when the source
	// does not say (plain dmesg output).
	Priority int `json:"priority"`
	// Facility is the syslog facility (0 kernel); -1 when unknown.
	Facility int `json:"facility"`
	// Seq is the kernel's sequence number (/dev/kmsg); 0 when unknown.
	Seq uint64 `json:"seq,omitempty"`
	// Mono is the time since boot the kernel stamped; -1 when unknown.
	Mono time.Duration `json:"mono_ns"`
	// Time is the wall-clock time when the source gives one (dmesg -T,
	// journalctl); zero otherwise.
	Time time.Time `json:"time,omitzero"`
	// Message is the text, without the prefix of its source.
	Message string `json:"message"`
	// Device is the kmsg dictionary's DEVICE= value ("b8:16", "+scsi:2:0:0:0"),
	// "" when absent.
	Device string `json:"device,omitempty"`
}

// Format names a kind of saved kernel log.
type Format string

// The formats ReadSaved recognises.
const (
	FormatKmsg        Format = "kmsg"          // raw /dev/kmsg records: "6,339,5140900,-;text"
	FormatDmesg       Format = "dmesg"         // "[    5.140900] text"
	FormatDmesgTime   Format = "dmesg -T"      // "[Tue Dec  1 18:17:37 2026] text"
	FormatJournal     Format = "journalctl -k" // "Dec 01 18:17:37 host kernel: text" (short, short-iso, short-precise)
	FormatJournalJSON Format = "journalctl -k -o json"
	FormatSyslog      Format = "syslog" // /var/log/kern.log: like journalctl short
	// FormatPlain is kernel messages without a stamp: dmesg -t, "dmesg -r"
	// of a kernel without printk times ("<6>ata1: …"), a console, or a paste
	// that lost its stamps. ReadSaved takes a bare line only when Classify
	// finds something in it, so that other text is not read as a log.
	FormatPlain Format = "plain"
)

// Kind is what a kernel message says happened.
type Kind string

// The kinds of finding.
const (
	KindIOError       Kind = "io_error"        // I/O error, dev sdX, sector N op 0x...
	KindBufferIOError Kind = "buffer_io_error" // Buffer I/O error on dev sdX1, logical block N
	KindMediumError   Kind = "medium_error"    // critical medium error; Sense Key : Medium Error; Unrecovered read error
	KindTargetError   Kind = "target_error"    // critical target error
	KindCommandFailed Kind = "command_failed"  // ataN.00: failed command; FAILED Result: hostbyte=…; uas_eh_abort_handler
	KindTimeout       Kind = "timeout"         // nvme I/O timeout, aborting; SCSI command timed out
	KindLinkReset     Kind = "link_reset"      // ataN: hard resetting link; usb reset; uas device reset; nvme controller reset
	KindLinkError     Kind = "link_error"      // SError with interface bits (CRC, 10B8B, disparity, handshake, PHY)
	KindLinkSlow      Kind = "link_slow"       // ataN: link is slow to respond
	KindLinkDown      Kind = "link_down"       // ataN: SATA link down; nvme controller is down
	KindGone          Kind = "gone"            // USB disconnect; nvme Removing after probe failure
)

// Cause is what a kind of finding most likely points at.
type Cause string

// The causes.
const (
	CauseMedia Cause = "media" // the disk's surface or flash
	CauseLink  Cause = "link"  // cable, backplane, power or USB enclosure
	CauseGone  Cause = "gone"  // the disk left the machine
	CauseIO    Cause = "io"    // failed I/O without a stated cause
)

// Ref is how a message names the disk or the port it sits on.
type Ref struct {
	// Kind is one of "block" (sdb, nvme0n1; a partition is given as its
	// disk), "ata" (ata3 the port, ata3.00 a device on it), "scsi" (2:0:0:0,
	// or host2 for a whole SCSI host such as a UAS bridge), "usb" (2-1,
	// 2-1.4) and "nvme" (nvme0, a controller).
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// String is the reference as a person reads it: "sdb", "ata3", "scsi 2:0:0:0",
// "usb 2-1", "nvme0".
func (r Ref) String() string {
	switch r.Kind {
	case "scsi", "usb":
		return r.Kind + " " + r.Name
	}
	return r.Name
}

// Finding is what one message says about one disk or port.
type Finding struct {
	Kind Kind `json:"kind"`
	// Ref is the disk or port named; a message that names both a SCSI
	// address and a block device ("sd 2:0:0:0: [sdb] …") gives the block device.
	Ref Ref `json:"ref"`
	// Sector is the failed sector, when the message says; -1 otherwise.
	Sector int64 `json:"sector"`
	// Op is READ, WRITE, FLUSH… when the message says.
	Op string `json:"op,omitempty"`
}
