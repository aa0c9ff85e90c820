package zfs

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	reMirror    = regexp.MustCompile(`^mirror(-\d+)?$`)
	reRaidz     = regexp.MustCompile(`^raidz([123])?(-\d+)?$`)
	reDraid     = regexp.MustCompile(`^draid(\d)(?::(\d+)d)?(?::(\d+)c)?(?::(\d+)s)?(-\d+)?$`)
	reDSpare    = regexp.MustCompile(`^draid\d+-\d+-\d+$`)
	reReplacing = regexp.MustCompile(`^replacing(-\d+)?$`)
	reSpare     = regexp.MustCompile(`^spare(-\d+)?$`)
	reIndirect  = regexp.MustCompile(`^indirect(-\d+)?$`)
	reHole      = regexp.MustCompile(`^hole(-\d+)?$`)
)

// interiorType gives the type of an interior vdev from its printed name
// (mirror-0, raidz2-1, draid2:4d:8c:1s-0, ...) and fills the layout fields.
// It reports false for names that are not interior vdevs.
func interiorType(v *Vdev) bool {
	n := v.Name
	switch {
	case reMirror.MatchString(n):
		v.Type = VdevMirror
	case reDSpare.MatchString(n):
		v.Type = VdevDSpare // a leaf: its name is all there is to address it
		v.Path = n
	case reDraid.MatchString(n):
		m := reDraid.FindStringSubmatch(n)
		v.Type = VdevDraid
		v.Parity = atoiSafe(m[1])
		v.DraidData = atoiSafe(m[2])
		v.DraidSpares = atoiSafe(m[4])
	case reRaidz.MatchString(n):
		m := reRaidz.FindStringSubmatch(n)
		v.Type = VdevRaidz
		v.Parity = 1 // "raidz-0" and "raidz" are single parity
		if m[1] != "" {
			v.Parity = atoiSafe(m[1])
		}
	case reReplacing.MatchString(n):
		v.Type = VdevReplacing
	case reSpare.MatchString(n):
		v.Type = VdevSpare
	case reIndirect.MatchString(n):
		v.Type = VdevIndirect
	case reHole.MatchString(n):
		v.Type = VdevHole
	default:
		return false
	}
	return true
}

// classifyLeaf sets Type, Path and GUID of a leaf from its printed name.
// Paths outside /dev are file vdevs. A name of only digits is the GUID zpool
// prints for a device it cannot open; its configured path is the "was" note.
func classifyLeaf(v *Vdev) {
	n := v.Name
	switch {
	case isGUIDName(n):
		v.GUID = n
		v.Path = v.Was
		v.Type = VdevDisk
		if strings.HasPrefix(v.Was, "/") && !strings.HasPrefix(v.Was, "/dev/") {
			v.Type = VdevFile
		}
	case strings.HasPrefix(n, "/"):
		v.Path = n
		v.Type = VdevDisk
		if !strings.HasPrefix(n, "/dev/") {
			v.Type = VdevFile
		}
	default:
		// Bare names (sda, ada0, gpt/x, wwn-..., ata-...) are kept as printed:
		// the directory they live in depends on how the pool was imported.
		v.Path = n
		v.Type = VdevDisk
	}
}

// isGUIDName reports whether a vdev name is a decimal vdev GUID.
func isGUIDName(n string) bool {
	if len(n) < 8 || len(n) > 20 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseUint(n, 10, 64)
	return err == nil
}

func atoiSafe(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// normalizeState maps the vdev_state_t spellings found in JSON output
// (HEALTHY, CANT_OPEN) to the ones zpool prints in text.
func normalizeState(s string) string {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "HEALTHY":
		return StateOnline
	case "CANT_OPEN":
		return StateUnavail
	case "CLOSED":
		return StateOffline
	}
	return strings.ToUpper(strings.TrimSpace(s))
}

// IsInteriorName reports whether a vdev name as zpool prints it is a group
// of devices (mirror-0, raidz2-1, draid1:4d:6c:1s-0, replacing-0, spare-1,
// indirect-2, hole-3) rather than a device.
func IsInteriorName(n string) bool {
	if reDSpare.MatchString(n) {
		return false
	}
	for _, re := range []*regexp.Regexp{reMirror, reRaidz, reDraid, reReplacing, reSpare, reIndirect, reHole} {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}

// Place names where a device sits for a person: "tank/mirror-0", or just
// "tank" when the top-level vdev is the device itself (a single-disk vdev,
// whose name is its path; "hung//dev/disk/by-id/..." said it twice).
func Place(pool, top string) string {
	if top == "" || !IsInteriorName(top) {
		return pool
	}
	return pool + "/" + top
}
