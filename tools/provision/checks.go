package provision

import "fmt"

// preflightCheck is one pre-flight check. Exactly one of its funcs is set,
// and which one says what the check looks at: each resolved disk, each data,
// special and log vdev (path is its key path, e.g. "vdevs[0]"), or the pool
// as a whole.
type preflightCheck struct {
	// name is the Check of the results it adds (some add a second kind:
	// signatures adds zfs-label, key-file adds systemd-unit).
	name   string
	onDisk func(s *inspector, d *DiskInfo)
	onVdev func(s *inspector, path string, v VdevSpec)
	onPool func(s *inspector)
}

// preflightChecks are the checks Inspect runs once the plan's disks are
// resolved, in the order their results are printed: every disk check on the
// first disk, then on the next; then every vdev check on each vdev; then the
// pool checks. Adding a check is one check_<name>.go file and one line here.
//
// Three run outside the table because the others depend on them: pool-name
// (with tools) decides whether there is anything to check, resolving the
// disks (device, duplicate and by-id failures, resolve_disks.go) makes the
// DiskInfo the checks read, and the space traps need the resolved plan.
func preflightChecks() []preflightCheck {
	return []preflightCheck{
		{name: "device", onDisk: (*inspector).checkWholeDisk},
		{name: "mounted", onDisk: (*inspector).checkMounted},
		{name: "swap", onDisk: (*inspector).checkSwap},
		{name: "holders", onDisk: (*inspector).checkHolders},
		{name: "signatures", onDisk: (*inspector).checkSignatures},
		{name: "smr", onDisk: (*inspector).checkSMR},
		{name: "usb", onDisk: (*inspector).checkUSB},
		{name: "smart", onDisk: (*inspector).checkSMART},
		{name: "sizes", onVdev: (*inspector).checkSizes},
		{name: "mixed-media", onVdev: (*inspector).checkMixedMedia},
		{name: "ashift", onPool: (*inspector).checkAshift},
		{name: "aes", onPool: (*inspector).checkAES},
		{name: "key-file", onPool: (*inspector).checkKeyFile},
		{name: "layout", onPool: (*inspector).checkRaidz1LargeDisks},
		{name: "layout", onPool: (*inspector).checkSpecialRedundancy},
	}
}

// runChecks runs checks on the resolved disks, the vdevs and the pool, in
// the order preflightChecks documents.
func (s *inspector) runChecks(checks []preflightCheck) {
	for i := range s.in.Disks {
		for _, c := range checks {
			if c.onDisk != nil {
				c.onDisk(s, &s.in.Disks[i])
			}
		}
	}
	classes := []struct {
		name string
		vs   []VdevSpec
	}{{"vdevs", s.p.Vdevs}, {"special", s.p.Special}, {"log", s.p.Log}}
	for _, class := range classes {
		for i, v := range class.vs {
			path := fmt.Sprintf("%s[%d]", class.name, i)
			for _, c := range checks {
				if c.onVdev != nil {
					c.onVdev(s, path, v)
				}
			}
		}
	}
	for _, c := range checks {
		if c.onPool != nil {
			c.onPool(s)
		}
	}
}
