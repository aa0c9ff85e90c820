package kernlog

import (
	"strings"
	"testing"
	"time"
)

// A real record with its dictionary, from testdata/kernel-log/kmsg-udisks-1231-nvme-fabrics.txt
// (one read(2) of /dev/kmsg returns exactly this).
const realKmsgRecord = "3,892,7382617,-;nvme nvme1: failed to connect socket: -110\n SUBSYSTEM=nvme\n DEVICE=c241:1\n"

func TestParseKmsgRealRecord(t *testing.T) {
	rec, err := ParseKmsg([]byte(realKmsgRecord))
	if err != nil {
		t.Fatal(err)
	}
	want := Record{Priority: 3, Facility: 0, Seq: 892, Mono: 7382617 * time.Microsecond,
		Message: "nvme nvme1: failed to connect socket: -110", Device: "c241:1"}
	if rec != want {
		t.Errorf("got %+v\nwant %+v", rec, want)
	}
}

func TestParseKmsgFacilityAndCallerField(t *testing.T) {
	// Facility 3 (daemon) level 6: 30 = 3<<3|6; newer kernels add caller=.
	rec, err := ParseKmsg([]byte("30,340,5690716,-,caller=T80;udevd[80]: starting version 181\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Facility != 3 || rec.Priority != 6 || rec.Seq != 340 || rec.Message != "udevd[80]: starting version 181" {
		t.Errorf("got %+v", rec)
	}
}

// The kernel escapes control characters, bytes ≥ 0x7f and the backslash as
// \xNN; this constructed record exercises the decoder (not a real capture).
func TestParseKmsgDecodesEscapes(t *testing.T) {
	rec, err := ParseKmsg([]byte(`6,1,2,-;a\x0ab\x5cc\x e\xZZ` + "\n DEVICE=+scsi:2:0:0:0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\nb\\c\\x e\\xZZ"; rec.Message != want {
		t.Errorf("message %q, want %q", rec.Message, want)
	}
	if rec.Device != "+scsi:2:0:0:0" {
		t.Errorf("device %q", rec.Device)
	}
}

func TestParseKmsgErrorsNameTheProblem(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "no ';'",
		"6,1,2,- no semicolon":         "no ';'",
		"6,1;text":                     "has 2 fields",
		"x,1,2,-;text":                 "priority \"x\"",
		"6,-1,2,-;text":                "sequence \"-1\"",
		"6,1,2.5,-;text":               "timestamp \"2.5\"",
		"6,1,99999999999999999999,-;t": "timestamp",
	} {
		_, err := ParseKmsg([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKmsg(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
