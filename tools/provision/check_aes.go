package provision

import "strings"

// CPUHasAES reads /proc/cpuinfo: x86 "flags" or ARM "Features" with aes.
// known is false when neither line is present.
func CPUHasAES(cpuinfo []byte) (has, known bool) {
	for _, l := range strings.Split(string(cpuinfo), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		if k != "flags" && k != "Features" {
			continue
		}
		known = true
		for _, f := range strings.Fields(v) {
			if f == "aes" {
				return true, true
			}
		}
	}
	return false, known
}

// checkAES tells, for an encrypted plan, whether the CPU has AES
// instructions: without them native ZFS encryption runs far below disk
// speed.
func (s *inspector) checkAES() {
	if s.p.Encryption == nil {
		return
	}
	data, err := s.h.ReadFile("/proc/cpuinfo")
	has, known := CPUHasAES(data)
	switch {
	case err != nil || !known:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Warn, Reason: "cannot tell from /proc/cpuinfo whether the CPU has AES instructions", Fix: "check `grep -wm1 aes /proc/cpuinfo`; without AES, native ZFS encryption is very slow"})
	case !has:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Warn,
			Reason: "the CPU has no AES instructions (no aes in /proc/cpuinfo): native ZFS encryption has run at about 10 MB/s on such boards (Raspberry Pi 4, CM4), far below what the disks can do",
			Fix:    "leave the pool unencrypted, encrypt only the datasets that need it, or use a board with AES (most ARMv8.2+ SoCs, any x86 since ~2010)"})
	default:
		s.add(CheckResult{Check: "aes", Subject: "cpu", Status: Pass, Reason: "the CPU has AES instructions: encryption costs little"})
	}
}
