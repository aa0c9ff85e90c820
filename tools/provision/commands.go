package provision

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// UnitPath is where the boot-time key-loading unit is installed.
const UnitPath = "/etc/systemd/system/zfs-load-key@.service"

// LoadKeyUnit loads a pool's keys at boot, after the pool is imported and
// before its datasets are mounted: systemctl enable zfs-load-key@POOL.
// %i (not %I): pool names may hold '-', which %I would turn into '/'.
const LoadKeyUnit = `# Installed by zwatch provision. Loads the encryption keys of ZFS pool %i at
# boot, after the pool is imported and before its datasets are mounted.
# Enable it per pool: systemctl enable zfs-load-key@POOL.service
[Unit]
Description=Load ZFS encryption keys of pool %i
Documentation=man:zfs-load-key(8)
DefaultDependencies=no
After=zfs-import.target
Wants=zfs-import.target
Before=zfs-mount.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=zfs load-key -r %i

[Install]
WantedBy=zfs-mount.service
`

// passphraseDir holds a typed passphrase for the moment zpool create reads
// it: /run is a tmpfs, so it never reaches a disk.
const passphraseDir = "/run/zwatch-provision"

func passphraseFile(pool string) string { return passphraseDir + "/" + pool + ".passphrase" }

// Step is one thing --apply does: a command, or a file to write.
type Step struct {
	// Why is a one-line comment printed above the command.
	Why  string
	Argv []string
	File *FileStep
	// Undo says how to reverse the step, for the account of a failure.
	Undo string
	// CreatesPool marks zpool create.
	CreatesPool bool
	// Secret steps carry what the person typed (the passphrase): the file
	// content is never printed.
	Secret bool
}

// FileStep writes a new file; it fails if the file exists.
type FileStep struct {
	Path    string
	Mode    fs.FileMode
	Content []byte
}

// String is the step as a person would type it.
func (s Step) String() string {
	if s.File != nil {
		if s.Secret {
			return fmt.Sprintf("# write the passphrase you type to %s (mode %04o)", s.File.Path, s.File.Mode)
		}
		return fmt.Sprintf("install -m %04o /dev/stdin %s <<'EOF'\n%sEOF", s.File.Mode, shellQuote(s.File.Path), s.File.Content)
	}
	return shellJoin(s.Argv)
}

// Commands are the argv --apply runs for plan p, in order. Files it writes
// (the systemd unit, a passphrase) are in Steps.
func Commands(p *Plan) [][]string {
	var out [][]string
	for _, s := range Steps(p) {
		if s.Argv != nil {
			out = append(out, s.Argv)
		}
	}
	return out
}

// Steps are everything --apply does for plan p, in order.
func Steps(p *Plan) []Step {
	var steps []Step
	for _, w := range p.Wipe {
		if w.ZFSLabel {
			steps = append(steps, Step{Why: "clear the old ZFS labels (wipefs leaves ZFS's label data behind)",
				Argv: []string{"zpool", "labelclear", "-f", w.Device},
				Undo: "# none: the old pool can no longer be imported from " + w.Device})
		}
		steps = append(steps, Step{Why: "erase signatures of " + w.Device + "; a backup of each goes to $HOME/wipefs-*.bak",
			Argv: []string{"wipefs", "--all", "--backup", w.Device},
			Undo: fmt.Sprintf("# restore each erased signature of %s: dd if=$HOME/wipefs-%s-<offset>.bak of=%s seek=$((<offset>)) bs=1 conv=notrunc", w.Device, filepath.Base(w.Device), w.Device)})
	}
	if e := p.Encryption; e != nil {
		switch e.Keyformat {
		case KeyRaw:
			kf := p.keyFile()
			steps = append(steps,
				Step{Why: "a directory only root can read, for the key", Argv: []string{"install", "-d", "-m", "0700", filepath.Dir(kf)}},
				Step{Why: "generate the key: 32 random bytes; conv=excl refuses to overwrite an existing key",
					Argv: []string{"dd", "if=/dev/urandom", "of=" + kf, "bs=32", "count=1", "iflag=fullblock", "conv=excl", "status=none"},
					Undo: "rm " + shellQuote(kf) + "    # only once no pool uses it: it is the only way to the data"},
				Step{Why: "only root may read the key", Argv: []string{"chmod", "0600", kf}},
			)
		case KeyPassphrase:
			steps = append(steps,
				Step{Why: "a root-only directory on tmpfs for the passphrase", Argv: []string{"install", "-d", "-m", "0700", passphraseDir}},
				Step{Why: "zpool create reads the passphrase from this file; it is removed right after", Secret: true,
					File: &FileStep{Path: passphraseFile(p.Pool), Mode: 0o600},
					Undo: "rm " + passphraseFile(p.Pool)},
			)
		}
	}
	steps = append(steps, Step{Why: "create the pool with stable by-id names", Argv: zpoolCreate(p), CreatesPool: true,
		Undo: fmt.Sprintf("zpool destroy %s    # only while it is empty: it was created by this run", shellQuote(p.Pool))})
	if p.Encryption != nil && p.Encryption.Keyformat == KeyPassphrase {
		steps = append(steps,
			Step{Why: "forget the passphrase file", Argv: []string{"rm", "-f", passphraseFile(p.Pool)}},
			Step{Why: "ask for the passphrase at every boot", Argv: []string{"zfs", "set", "keylocation=prompt", p.Pool}},
		)
	}
	for _, d := range p.Datasets {
		argv := []string{"zfs", "create"}
		for _, k := range sortedKeys(d.Properties) {
			argv = append(argv, "-o", k+"="+d.Properties[k])
		}
		if d.Mountpoint != "" {
			argv = append(argv, "-o", "mountpoint="+d.Mountpoint)
		}
		argv = append(argv, p.fullName(d.Name))
		steps = append(steps, Step{Why: "", Argv: argv, Undo: "zfs destroy " + shellQuote(p.fullName(d.Name)) + "    # only while it is empty"})
	}
	if p.wantUnit() {
		if !p.unitPresent {
			steps = append(steps, Step{Why: "load the key at boot, before zfs-mount.service",
				File: &FileStep{Path: UnitPath, Mode: 0o644, Content: []byte(LoadKeyUnit)},
				Undo: "rm " + UnitPath})
		}
		steps = append(steps,
			Step{Argv: []string{"systemctl", "daemon-reload"}},
			Step{Argv: []string{"systemctl", "enable", "zfs-load-key@" + p.Pool + ".service"},
				Undo: "systemctl disable zfs-load-key@" + p.Pool + ".service"},
		)
	}
	return steps
}

// zpoolCreate is the zpool create argv.
func zpoolCreate(p *Plan) []string {
	argv := []string{"zpool", "create"}
	ashift := p.Ashift
	if ashift == 0 {
		ashift = 12
	}
	argv = append(argv, "-o", fmt.Sprintf("ashift=%d", ashift))
	for _, k := range sortedKeys(p.PoolProperties) {
		argv = append(argv, "-o", k+"="+p.PoolProperties[k])
	}
	props := map[string]string{}
	for k, v := range p.Properties {
		props[k] = v
	}
	if e := p.Encryption; e != nil {
		props["encryption"] = "aes-256-gcm"
		props["keyformat"] = e.Keyformat
		if e.Keyformat == KeyRaw {
			props["keylocation"] = "file://" + p.keyFile()
		} else {
			props["keylocation"] = "file://" + passphraseFile(p.Pool)
		}
	}
	for _, k := range sortedKeys(props) {
		argv = append(argv, "-O", k+"="+props[k])
	}
	if p.Mountpoint != "" {
		argv = append(argv, "-m", p.Mountpoint)
	}
	argv = append(argv, p.Pool)
	for _, v := range p.Vdevs {
		argv = append(argv, v.Layout)
		argv = append(argv, v.Disks...)
	}
	aux := func(word string, vs []VdevSpec) {
		if len(vs) == 0 {
			return
		}
		argv = append(argv, word)
		for _, v := range vs {
			if v.Layout == LayoutMirror {
				argv = append(argv, LayoutMirror)
			}
			argv = append(argv, v.Disks...)
		}
	}
	aux("special", p.Special)
	aux("log", p.Log)
	if len(p.Cache) > 0 {
		argv = append(append(argv, "cache"), p.Cache...)
	}
	if len(p.Spares) > 0 {
		argv = append(append(argv, "spare"), p.Spares...)
	}
	return argv
}

// shellQuote makes s one word for a POSIX shell: bare when only safe
// characters, else single-quoted with each ' written as '\”.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@%+=:,./_-", c) >= 0) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// WatchStanza is the zwatch config to merge into /etc/zwatch/zwatch.yaml so
// the new pool and its disks are watched.
func WatchStanza(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# zwatch: watch pool %s (from zwatch provision). Merge into /etc/zwatch/zwatch.yaml,\n", p.Pool)
	b.WriteString("# then: zwatch check-config /etc/zwatch/zwatch.yaml && systemctl restart zwatch\n")
	b.WriteString("zfs:\n  enabled: true\nsmart:\n  enabled: true\n  devices:\n")
	seen := map[string]bool{}
	var disks []string
	for _, r := range p.AllDisks() {
		if !seen[r.Name] {
			seen[r.Name] = true
			disks = append(disks, r.Name)
		}
	}
	sort.Strings(disks)
	for _, d := range disks {
		fmt.Fprintf(&b, "    - device: %s\n", d)
	}
	return b.String()
}
