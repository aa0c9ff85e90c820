package provision

import (
	"fmt"
	"strings"

	"github.com/zwatch/zwatch/internal/execx"
)

// poolName checks that the zpool tool works, that the name is one zpool
// accepts, and whether the pool exists; false stops inspection (the pool is
// there: compare instead). It runs first because an existing pool turns
// provisioning into a comparison, and nothing on its disks may be checked
// as if they were to be wiped.
func (s *inspector) poolName() bool {
	out, _, err := runOut(s.ctx, s.h, "zpool", "list", "-H", "-o", "name")
	switch {
	case execx.KindOf(err) == execx.KindMissing:
		s.add(CheckResult{Check: "tools", Subject: "zpool", Status: Fail, Reason: "zpool is not installed", Fix: "install OpenZFS (Debian/Ubuntu: apt install zfsutils-linux) and load the module (modprobe zfs)"})
	case err != nil:
		s.add(CheckResult{Check: "tools", Subject: "zpool", Status: Fail, Reason: "zpool list failed: " + err.Error(), Fix: "check that the zfs kernel module is loaded (modprobe zfs) and that you are root"})
	}
	for _, l := range strings.Split(string(out), "\n") {
		// Pool names have no spaces: "no pools available" is not one.
		if l = strings.TrimSpace(l); l != "" && !strings.ContainsAny(l, " \t") {
			s.in.Pools = append(s.in.Pools, l)
		}
	}
	for _, name := range s.in.Pools {
		if name == s.p.Pool {
			s.in.Exists = true
			s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Pass, Reason: "pool " + s.p.Pool + " exists: comparing it with the plan instead of creating it"})
			return false
		}
	}
	if why := CheckPoolName(s.p.Pool); why != "" {
		s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Fail, Reason: why, Fix: "choose a name that starts with a letter, e.g. tank or vault"})
	} else {
		s.add(CheckResult{Check: "pool-name", Subject: s.p.Pool, Status: Pass, Reason: fmt.Sprintf("%q is a valid pool name and not taken", s.p.Pool)})
	}
	return true
}
