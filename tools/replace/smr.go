package replace

import "github.com/zwatch/zwatch/model/disk"

// SMRModel reports whether model is a known drive-managed SMR model, and
// which entry matched, from zwatch's one sourced list (disk.LookupSMR).
// During a resilver ZFS writes continuously, which DM-SMR drives cannot
// sustain: resilvers take days or the drive is kicked out mid-way.
func SMRModel(model string) (string, bool) {
	m, ok := disk.LookupSMR(model)
	if !ok {
		return "", false
	}
	return m.Model + " (" + m.Family + ", " + m.Source + ")", true
}
