package rules

import (
	"fmt"
	"time"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/zfs"
)

func zfsVersionMismatchRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.ZFSVersion},
		Eval:  poolsEval(ruleZFSVersionMismatch),
		Alerts: []AlertInfo{{
			Name:     nameZFSVersionMismatch,
			Severity: "warning",
			Condition: "`zfs version` (at start and every `zfs.version_interval`) reports a userland release other than the loaded kernel module's " +
				"(upstream releases compared: 2.2.6 against 2.2.4, and the commit of a build from git; packaging revisions alone do not count); fires at once",
		}},
		Memory: []memoryDef{zfsVersionMemory},
	}
}

// nameZFSVersionMismatch: ZFS was upgraded but the old kernel module is
// still loaded. The tools then send the module requests it may not know:
// reported failures are a `zpool upgrade` that cannot set a property, a
// `zfs send` refused as an invalid argument, and a dataset created in that
// state that would not mount after the reboot (openzfs/zfs#3326, #16716).
func ruleZFSVersionMismatch(c *evalCtx) {
	v := zfsVersionMemory.peek(c.h)
	if v == nil || v.Userland == "" || v.Kernel == "" {
		return // one side unknown: nothing to compare
	}
	user, kern := zfs.Release(v.Userland), zfs.Release(v.Kernel)
	if user == kern {
		return
	}
	c.emit(cond{name: nameZFSVersionMismatch, severity: alert.Warning,
		labels:  map[string]string{},
		summary: fmt.Sprintf("ZFS userland %s but kernel module %s is loaded", user, kern),
		desc: fmt.Sprintf("`%s` reports the userland %s and the kernel module %s: ZFS was upgraded but the old kernel module is still loaded. "+
			"Until they match, commands may fail or act wrongly (a `zpool upgrade` that cannot set a property, a `zfs send` refused as an invalid argument); "+
			"avoid `zpool upgrade` and creating datasets until then.\n"+
			"Fix: reboot (or export all pools, then `modprobe -r zfs && modprobe zfs`). If the mismatch stays after a reboot, the initramfs or the DKMS module was not rebuilt: "+
			"`dkms status`, then `update-initramfs -u` (Debian, Ubuntu) or `dracut -f`.",
			v.Source, v.Userland, v.Kernel),
		evidence: map[string]string{"userland": v.Userland, "kernel": v.Kernel, "source": v.Source}})
}

// zfsVersionMemory is the latest zfs version fact. It is saved, so a
// mismatch still firing is not resolved by a restart before the next
// check. Version 0 (41d2458's zfs_version) is the same fact.
var zfsVersionMemory = remember("zfs_version", 1, sameShape[facts.ZFSVersionData])

// noteZFSVersion keeps the latest zfs version fact.
func (e *Engine) noteZFSVersion(h *hostState, d facts.ZFSVersionData, _ time.Time) {
	if v := zfsVersionMemory.peek(h); v != nil && *v == d {
		return
	}
	*zfsVersionMemory.of(h) = d
	h.dirty = true
}
