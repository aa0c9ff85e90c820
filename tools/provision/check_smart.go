package provision

import (
	"bytes"
	"fmt"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
)

// checkSMART reads the disk's SMART overall health: a disk that predicts its
// own failure must not go into a new pool.
func (s *inspector) checkSMART(d *DiskInfo) {
	k := d.ID.Kernel
	argv := []string{"smartctl", "-j", "-a"}
	if d.ID.SmartType != "" {
		argv = append(argv, "-d", d.ID.SmartType)
	}
	argv = append(argv, devOf(d.ID))
	out, _, err := runOut(s.ctx, s.h, argv...)
	if kind := execx.KindOf(err); kind == execx.KindMissing {
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl is not installed: disk health unknown", Fix: "install smartmontools (apt install smartmontools) and run again"})
		return
	} else if err != nil && len(out) == 0 {
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl failed: " + err.Error(), Fix: "run `" + shellJoin(argv) + "` to see why"})
		return
	}
	rep, perr := smart.Parse(bytes.NewReader(out))
	switch {
	case perr != nil:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: "smartctl output unreadable: " + perr.Error(), Fix: "run `" + shellJoin(argv) + "`"})
	case rep.SmartPassed == nil:
		msg := "SMART health unknown"
		if len(rep.Errors) > 0 {
			msg += ": " + rep.Errors[0]
		}
		fix := "run `" + shellJoin(argv) + "`"
		if d.ID.Transport == disk.TransportUSB {
			fix = "the USB bridge may need a type: try `smartctl -d sat -a " + devOf(d.ID) + "`"
		}
		s.add(CheckResult{Check: "smart", Subject: k, Status: Warn, Reason: msg, Fix: fix})
	case !*rep.SmartPassed:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Fail,
			Reason: fmt.Sprintf("SMART overall health FAILED (%s): the disk itself predicts its failure", describe(d.ID)),
			Fix:    "do not build a pool on it: return it under warranty or replace it"})
	default:
		s.add(CheckResult{Check: "smart", Subject: k, Status: Pass, Reason: "SMART overall health PASSED"})
	}
}
