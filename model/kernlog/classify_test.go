package kernlog

import "testing"

func block(name string) Ref { return Ref{Kind: "block", Name: name} }

// Lines from the real logs under testdata/kernel-log (file in the comment).
var classifyCases = []struct {
	msg  string
	want Finding
}{
	// scsi-longhorn-1920-medium-error-dmesg-T.txt
	{"blk_update_request: critical medium error, dev sde, sector 3260792 op 0x0:(READ) flags 0x80700 phys_seg 211 prio class 0",
		Finding{Kind: KindMediumError, Ref: block("sde"), Sector: 3260792, Op: "READ"}},
	{"sd 3:0:0:1: [sde] tag#40 Sense Key : Medium Error [current]",
		Finding{Kind: KindMediumError, Ref: block("sde"), Sector: -1}},
	// A result the device answered is said again by its sense lines; one
	// that did not reach it is a finding of its own.
	// (block-longhorn-12470-dmesg-x-delta-ctime.txt)
	{"sd 2:0:0:1: [sda] tag#35 FAILED Result: hostbyte=DID_TRANSPORT_DISRUPTED driverbyte=DRIVER_OK cmd_age=263s",
		Finding{Kind: KindCommandFailed, Ref: block("sda"), Sector: -1}},
	// scsi-openebs-1433: the old form without op.
	{"blk_update_request: critical medium error, dev sdb, sector 5120",
		Finding{Kind: KindMediumError, Ref: block("sdb"), Sector: 5120}},
	{"Buffer I/O error on dev sdb, logical block 640, lost async page write",
		Finding{Kind: KindBufferIOError, Ref: block("sdb"), Sector: -1, Op: "WRITE"}},
	// block-daplink-726
	{"Buffer I/O error on dev sda, logical block 131072, async page read",
		Finding{Kind: KindBufferIOError, Ref: block("sda"), Sector: -1, Op: "READ"}},
	// nvme-bspwr-blog: 6.x, no function prefix.
	{"I/O error, dev nvme0n1, sector 2623470496 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 2",
		Finding{Kind: KindIOError, Ref: block("nvme0n1"), Sector: 2623470496, Op: "WRITE"}},
	// block-appstream-107: 4.17–4.20.
	{"print_req_error: I/O error, dev sdc, sector 1098288304 flags 0",
		Finding{Kind: KindIOError, Ref: block("sdc"), Sector: 1098288304}},
	// libata files.
	{"ata1.00: failed command: READ FPDMA QUEUED",
		Finding{Kind: KindCommandFailed, Ref: Ref{Kind: "ata", Name: "ata1.00"}, Sector: -1, Op: "READ"}},
	{"ata1: hard resetting link",
		Finding{Kind: KindLinkReset, Ref: Ref{Kind: "ata", Name: "ata1"}, Sector: -1}},
	{"ata1: SError: { UnrecovData Proto 10B8B BadCRC TrStaTrns }",
		Finding{Kind: KindLinkError, Ref: Ref{Kind: "ata", Name: "ata1"}, Sector: -1}},
	{"ata1: link is slow to respond, please be patient (ready=0)",
		Finding{Kind: KindLinkSlow, Ref: Ref{Kind: "ata", Name: "ata1"}, Sector: -1}},
	{"ata1: SATA link down (SStatus 0 SControl 300)",
		Finding{Kind: KindLinkDown, Ref: Ref{Kind: "ata", Name: "ata1"}, Sector: -1}},
	{"ata1: COMRESET failed (errno=-16)",
		Finding{Kind: KindLinkReset, Ref: Ref{Kind: "ata", Name: "ata1"}, Sector: -1}},
	// UAS and USB.
	{"sd 3:0:0:0: [sdd] tag#28 uas_eh_abort_handler 0 uas-tag 5 inflight: CMD IN",
		Finding{Kind: KindCommandFailed, Ref: block("sdd"), Sector: -1}},
	{"scsi host0: uas_eh_device_reset_handler start",
		Finding{Kind: KindLinkReset, Ref: Ref{Kind: "scsi", Name: "host0"}, Sector: -1}},
	{"usb 2-1.4: reset SuperSpeed USB device number 3 using xhci-hcd",
		Finding{Kind: KindLinkReset, Ref: Ref{Kind: "usb", Name: "2-1.4"}, Sector: -1}},
	{"usb 3-1.1: USB disconnect, device number 3",
		Finding{Kind: KindGone, Ref: Ref{Kind: "usb", Name: "3-1.1"}, Sector: -1}},
	{"usb 2-1.2: device not accepting address 26, error -71",
		Finding{Kind: KindLinkError, Ref: Ref{Kind: "usb", Name: "2-1.2"}, Sector: -1}},
	// NVMe.
	{"nvme nvme2: I/O 0 QID 0 timeout, reset controller",
		Finding{Kind: KindTimeout, Ref: Ref{Kind: "nvme", Name: "nvme2"}, Sector: -1}},
	{"nvme nvme2: Removing after probe failure status: -19",
		Finding{Kind: KindGone, Ref: Ref{Kind: "nvme", Name: "nvme2"}, Sector: -1}},
	{"nvme nvme0: Device not ready; aborting reset, CSTS=0x1",
		Finding{Kind: KindLinkDown, Ref: Ref{Kind: "nvme", Name: "nvme0"}, Sector: -1}},
	// nvme-ahmedalsawi-blog-6x-timeout-tag-opcode.txt: 6.x wording.
	{"nvme nvme0: I/O tag 641 (c281) opcode 0x1 (I/O Cmd) QID 8 timeout, aborting req_op:WRITE(1) size:4096",
		Finding{Kind: KindTimeout, Ref: Ref{Kind: "nvme", Name: "nvme0"}, Sector: -1, Op: "WRITE"}},
	// nvme-sedutil-507: the per-command report, status code type 2 (media).
	{"nvme0n1: I/O Cmd(0x2) @ LBA 0, 8 blocks, I/O Error (sct 0x2 / sc 0x86) DNR ",
		Finding{Kind: KindMediumError, Ref: block("nvme0n1"), Sector: 0, Op: "READ"}},
	// scsi-longhorn-9878: a partition's error names its disk.
	{"Buffer I/O error on dev sdaj1, logical block 83658496, async page read",
		Finding{Kind: KindBufferIOError, Ref: block("sdaj"), Sector: -1, Op: "READ"}},
	// usb-dietpi-6071: the old wording.
	{"Buffer I/O error on device sdb2, logical block 1047375",
		Finding{Kind: KindBufferIOError, Ref: block("sdb"), Sector: -1}},
	// sas-zfs-7859
	{"sd 12:0:0:0: attempting task abort! scmd(00000000e45ed1f1)",
		Finding{Kind: KindTimeout, Ref: Ref{Kind: "scsi", Name: "12:0:0:0"}, Sector: -1}},
	// usb-dietpi-4499-timeout-disconnect
	{"sd 1:0:0:0: [sda] tag#14 UNKNOWN(0x2003) Result: hostbyte=0x00 driverbyte=0x06 cmd_age=30s",
		Finding{Kind: KindTimeout, Ref: block("sda"), Sector: -1}},
	// block-rpi-linux-703: the 3.x wording.
	{"end_request: I/O error, dev sda, sector 324949408",
		Finding{Kind: KindIOError, Ref: block("sda"), Sector: 324949408}},
	// nvme-rpi-linux-6661
	{"nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0x10",
		Finding{Kind: KindLinkDown, Ref: Ref{Kind: "nvme", Name: "nvme0"}, Sector: -1}},
	// scsi-hotsos-631
	{"sd 0:0:11:0: [sdh] tag#2713 Sense Key : Aborted Command [current]",
		Finding{Kind: KindCommandFailed, Ref: block("sdh"), Sector: -1}},
}

func TestClassifyRealLines(t *testing.T) {
	for _, c := range classifyCases {
		got, ok := Classify(c.msg)
		if !ok || got != c.want {
			t.Errorf("Classify(%q)\n = %+v, %v\nwant %+v", c.msg, got, ok, c.want)
		}
	}
}

// Real lines that say nothing about a disk's health.
var notFindings = []string{
	"ata1.00: status: { DRDY }",
	"ata1.00: error: { ABRT }",
	"ata1: SError: { RecovComm PHYRdyChg CommWake DevExch }",
	"ata1: SATA link up 6.0 Gbps (SStatus 133 SControl 300)",
	"ata1.00: exception Emask 0x0 SAct 0x1 SErr 0x0 action 0x6 frozen",
	"scsi host0: uas_eh_device_reset_handler success",
	"sd 3:0:0:1: [sde] tag#40 CDB: Read(10) 28 00 00 31 c9 b8 00 00 30 00",
	"sd 0:0:11:0: [sdh] tag#2713 Add. Sense: No additional sense information",
	// The pair's "Sense Key" line is the finding; these say it again.
	"sd 3:0:0:1: [sde] tag#40 Add. Sense: Unrecovered read error",
	"sd 3:0:0:1: [sde] tag#40 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE cmd_age=0s",
	"sd 0:0:5:0: [sda] tag#87 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age=0s",
	"sd 0:0:5:0: [sda] tag#87 Add. Sense: I/O process terminated",
	"blk_update_request: 59 callbacks suppressed",
	"buffer_io_error: 19980 callbacks suppressed",
	"nvme2n1: detected capacity change from 800166076416 to 0",
	"nvme nvme1: failed to connect socket: -110",
	"usb 4-1: new SuperSpeed USB device number 3 using xhci-hcd",
	"usb 2-2.3: usb_reset_and_verify_device Failed to disable LPM",
	"xhci_hcd 0000:01:00.0: WARNING: Host System Error",
	"EXT4-fs warning (device sda): ext4_end_bio:342: I/O error 10 writing to inode 13 starting block 308296)",
	"scsi 0:0:0:0: Direct-Access     Lenovo   USB Hard Drive   0006 PQ: 0 ANSI: 2",
	"scsi host1: uas_eh_device_reset_handler FAILED err -19",
	"sd 4:0:1:0: task abort: SUCCESS scmd(ffff880204baee80)",
	"sd 0:0:0:0: [sdd] killing request",
	"nvme nvme0: Abort status: 0x371",
	"sd 5:0:0:0: [sdb] tag#0 Sense Key : Illegal Request [current] ",
	"Buffer I/O error on dev sr0, logical block 0, async page read",
	"I/O error, dev sr0, sector 0 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 2",
	"Result: hostbyte=DID_NO_CONNECT driverbyte=DRIVER_OK",
	"scsi 0:0:0:0: [sda] Unhandled error code",
	"nvme nvme0: failed to set APST feature (-19)",
	"zio pool=kio vdev=/dev/disk/by-id/wwn-0x5000c500a0000105-part1 error=5 type=1 offset=270336 size=8192 flags=1245377",
}

func TestClassifyIgnoresOtherLines(t *testing.T) {
	for _, msg := range notFindings {
		if f, ok := Classify(msg); ok {
			t.Errorf("Classify(%q) = %+v, want no finding", msg, f)
		}
	}
}

func TestWholeDisk(t *testing.T) {
	for in, want := range map[string]string{
		"sdb1": "sdb", "sdab12": "sdab", "sdb": "sdb", "nvme0n1p2": "nvme0n1",
		"nvme0n1": "nvme0n1", "mmcblk0p1": "mmcblk0", "mmcblk0": "mmcblk0",
		"vda3": "vda", "xvdb1": "xvdb", "dm-3": "dm-3", "md127": "md127",
	} {
		if got := wholeDisk(in); got != want {
			t.Errorf("wholeDisk(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCause(t *testing.T) {
	for k, want := range map[Kind]Cause{
		KindMediumError: CauseMedia, KindIOError: CauseIO, KindBufferIOError: CauseIO,
		KindTargetError: CauseIO, KindCommandFailed: CauseIO, KindTimeout: CauseIO,
		KindLinkReset: CauseLink, KindLinkError: CauseLink, KindLinkSlow: CauseLink,
		KindLinkDown: CauseLink, KindGone: CauseGone,
	} {
		if got := k.Cause(); got != want {
			t.Errorf("%s.Cause() = %s, want %s", k, got, want)
		}
	}
	if len(Kinds()) != 11 {
		t.Errorf("Kinds() has %d kinds, want 11", len(Kinds()))
	}
}

// A line that matches nothing, as most kernel records do.
const quietLine = "EXT4-fs (mmcblk0p2): mounted filesystem with ordered data mode. Opts: (null)"

// Matching lines too: a finding's names are slices of the message.
func TestClassifyAllocatesNothing(t *testing.T) {
	lines := append([]string{quietLine}, notFindings...)
	for _, c := range classifyCases {
		lines = append(lines, c.msg)
	}
	for _, msg := range lines {
		if n := testing.AllocsPerRun(100, func() { Classify(msg) }); n != 0 {
			t.Errorf("Classify(%q) allocates %v times", msg, n)
		}
	}
}

func BenchmarkClassifyNonMatching(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Classify(quietLine)
	}
}

func BenchmarkClassifyNearMiss(b *testing.B) {
	// Starts like a finding (sd, tag#) and is read to the end.
	const line = "sd 3:0:0:1: [sde] tag#40 CDB: Read(10) 28 00 00 31 c9 b8 00 00 30 00"
	b.ReportAllocs()
	for b.Loop() {
		Classify(line)
	}
}
