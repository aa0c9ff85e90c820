package provision

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkKeyFile checks, for an encrypted plan, where the key goes: a raw key
// file must not overwrite one that exists (it may be another pool's key),
// and its directory should not be readable by others. It also reports a
// key-loading unit that is there with other content (systemd-unit).
func (s *inspector) checkKeyFile() {
	if s.p.Encryption == nil {
		return
	}
	e := s.p.Encryption
	if e.Keyformat == KeyPassphrase {
		s.add(CheckResult{Check: "key-file", Subject: s.p.Pool, Status: Pass,
			Reason: fmt.Sprintf("passphrase: you will type it now and after every boot (zfs load-key -r %s); nothing unlocks the pool unattended", s.p.Pool)})
		return
	}
	kf := s.p.keyFile()
	if exists(s.h, kf) {
		s.add(CheckResult{Check: "key-file", Subject: kf, Status: Fail,
			Reason: kf + " exists: it may be the key of another pool, and zwatch never overwrites a key",
			Fix:    "move it somewhere safe if it is unused, or set encryption.key_file to a new path"})
		return
	}
	dir := filepath.Dir(kf)
	if st, err := os.Stat(filepath.Join(s.h.Root(), dir)); err == nil && st.Mode().Perm()&0o077 != 0 {
		s.add(CheckResult{Check: "key-file", Subject: dir, Status: Warn,
			Reason: fmt.Sprintf("%s is readable by others (mode %04o): the plan sets it to 0700", dir, st.Mode().Perm())})
	} else {
		s.add(CheckResult{Check: "key-file", Subject: kf, Status: Pass, Reason: kf + " will be generated: 32 random bytes, mode 0600"})
	}
	if s.p.wantUnit() {
		cur, err := s.h.ReadFile(UnitPath)
		switch {
		case err != nil:
		case string(cur) == LoadKeyUnit:
			s.unitPresent = true
		default:
			s.unitPresent = true
			s.add(CheckResult{Check: "systemd-unit", Subject: UnitPath, Status: Warn,
				Reason: UnitPath + " exists with other content: zwatch leaves it alone",
				Fix:    "compare it with the unit zwatch prints (zwatch provision --plan-only) and make sure it loads keys before zfs-mount.service"})
		}
	}
}
