package rules

import (
	"fmt"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/alert"
)

// datasetSettings are rules.datasets: which datasets the lock and mount
// rules leave alone (datasetIgnored).
type datasetSettings struct {
	// Ignore lists dataset globs (path.Match: * does not cross /) that are
	// locked or unmounted on purpose: DatasetLocked, DatasetNotMounted and
	// KeyFileProblem skip them.
	Ignore []string `yaml:"ignore" doc:"e.g. [tank/scratch, backup/*]" note:"Datasets locked or unmounted on purpose (globs; * does not cross /)."`
}

var datasetsConfig = defineConfig("datasets", datasetSettings{})

func (d datasetSettings) validate(p string, errs *config.Errors) {
	globs(errs, p+".ignore", d.Ignore, "a dataset glob such as tank/scratch or backup/*")
}

func datasetLockedRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Datasets},
		Eval:  eachDataset.each(ruleDatasetLocked),
		Config: []config.RuleSection{
			datasetsConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameDatasetLocked,
			// Longer than the datasets collector's interval: a key being
			// loaded by hand, or by a slow boot unit, is no news.
			For:       10 * time.Minute,
			Severity:  "critical when it or a dataset using its key is meant to be mounted (canmount=on, a mountpoint path), else warning",
			Condition: "encryption root with keystatus=unavailable; not in `datasets.ignore`; `for` {for}",
		}},
	}
}

func keyFileProblemRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Datasets},
		Eval:  eachDataset.each(ruleKeyFileProblem),
		Config: []config.RuleSection{
			datasetsConfig,
		},
		Alerts: []AlertInfo{{
			Name:      nameKeyFileProblem,
			For:       10 * time.Minute,
			Severity:  "warning",
			Condition: "the key file of a `file://` keylocation is missing, unreadable, empty, the wrong size for keyformat raw (32 bytes) or hex (64 digits), or readable by group or others; `for` {for}",
		}},
	}
}

// nameDatasetLocked: an encryption root whose key is not loaded (after a
// reboot: the key file's unit failed, the file moved, nobody typed the
// passphrase). It and every dataset using its key stay unmounted, and
// writes to their mountpoints land on the disk below.
func ruleDatasetLocked(c *evalCtx, d *facts.DatasetState) {
	if d.EncryptionRoot != d.Name || d.KeyStatus != "unavailable" || datasetIgnored(c, d.Name) {
		return
	}
	var meant []*facts.DatasetState
	for i := range c.h.datasets.Datasets {
		o := &c.h.datasets.Datasets[i]
		if (o.Name == d.Name || o.EncryptionRoot == d.Name) && meantToMount(o) && !datasetIgnored(c, o.Name) {
			meant = append(meant, o)
		}
	}
	pool := poolOfDataset(d.Name)
	sev, summary := alert.Warning, fmt.Sprintf("dataset %s is locked: its key is not loaded", d.Name)
	if len(meant) > 0 {
		sev = alert.Critical
		summary += fmt.Sprintf(", %d filesystem(s) not mounted", len(meant))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The key of encryption root %s (keylocation %s, keyformat %s) is not loaded", d.Name, strutil.FirstNonEmpty(d.KeyLocation, "-"), strutil.FirstNonEmpty(d.KeyFormat, "-"))
	if len(meant) > 0 {
		var names []string
		for _, o := range meant {
			names = append(names, o.Name)
		}
		their := "their mountpoints land"
		if len(names) == 1 {
			their = "its mountpoint lands"
		}
		fmt.Fprintf(&b, ", so %s cannot mount and what is written to %s on the disk below", strings.Join(names, ", "), their)
	}
	b.WriteString(". " + loadKeyText(d))
	switch {
	case len(meant) == 1:
		fmt.Fprintf(&b, " Then mount it: `zfs mount %s`.", shellWord(meant[0].Name))
	case len(meant) > 1:
		b.WriteString(" Then mount them: `zfs mount -a`.")
	}
	ev := map[string]string{"keystatus": d.KeyStatus, "keylocation": d.KeyLocation, "keyformat": d.KeyFormat}
	for _, o := range meant {
		switch u := o.Underneath; {
		case wroteUnderneath(u):
			b.WriteString("\nBefore mounting " + o.Name + ": " + underneathText(c, o))
			ev["underneath_"+o.Name] = filesWritten(u)
		case u != nil && u.Error != "":
			fmt.Fprintf(&b, "\nzwatch could not look into %s (%s): check it with `ls -A %s` before mounting.", o.Mountpoint, u.Error, shellWord(o.Mountpoint))
		}
	}
	b.WriteString("\nSo that it unlocks at the next boot, see why it did not: `journalctl -b -u 'zfs-load-key*' -u zfs-mount.service`.")
	c.emit(cond{name: nameDatasetLocked, severity: sev, pool: pool,
		labels:   map[string]string{"pool": pool, "dataset": d.Name},
		summary:  summary,
		desc:     b.String(),
		evidence: ev})
}

// loadKeyText is how to load the key from where keylocation says it is.
func loadKeyText(d *facts.DatasetState) string {
	name := shellWord(d.Name)
	loc := d.KeyLocation
	switch {
	case loc == "prompt":
		what := "passphrase"
		if d.KeyFormat == "raw" || d.KeyFormat == "hex" {
			what = d.KeyFormat + " key"
		}
		return fmt.Sprintf("Load it: `zfs load-key %s` and enter the %s.", name, what)
	case strings.HasPrefix(loc, "file://"):
		file := strings.TrimPrefix(loc, "file://")
		if k := d.KeyFile; k != nil && k.Problem != "" {
			return fmt.Sprintf("Its key file %s %s: restore it from your backup, then load the key: `zfs load-key %s`.", file, keyFileWords(k), name)
		}
		return fmt.Sprintf("Load it: `zfs load-key %s` (it reads %s).", name, file)
	case strings.HasPrefix(loc, "https://") || strings.HasPrefix(loc, "http://"):
		return fmt.Sprintf("Load it: `zfs load-key %s` fetches the key from %s; check that this machine reaches it (`curl -sI %s`).", name, loc, shellWord(loc))
	}
	return fmt.Sprintf("Load it: `zfs load-key %s`.", name)
}

// keyFileWords says what is wrong with a key file, for a sentence, with
// the check's own words after it.
func keyFileWords(k *facts.KeyFileCheck) string {
	if k.Detail != "" {
		return keyFileProblemWords(k) + " (" + k.Detail + ")"
	}
	return keyFileProblemWords(k)
}

func keyFileProblemWords(k *facts.KeyFileCheck) string {
	switch k.Problem {
	case facts.KeyFileMissing:
		return "is missing"
	case facts.KeyFileUnreadable:
		return "cannot be read"
	case facts.KeyFileEmpty:
		return "is empty"
	case facts.KeyFileWrongSize:
		return "has the wrong size"
	case facts.KeyFileExposed:
		return "is readable by group or others"
	}
	return k.Problem
}

// nameKeyFileProblem: the key file a file:// keylocation names would fail
// the next zfs load-key — at the next boot the dataset stays locked.
func ruleKeyFileProblem(c *evalCtx, d *facts.DatasetState) {
	k := d.KeyFile
	if k == nil || k.Problem == "" || datasetIgnored(c, d.Name) {
		return
	}
	pool := poolOfDataset(d.Name)
	file := shellWord(k.Path)
	var fix string
	switch k.Problem {
	case facts.KeyFileExposed:
		fix = fmt.Sprintf("Make it readable by root only: `chmod 600 %s`; if someone may have copied it, make a new key (below).", file)
	case facts.KeyFileUnreadable:
		fix = fmt.Sprintf("zfs load-key runs as root and must read a regular file there: check `ls -l %s` (owner, mode, a directory or link in its place) and that its filesystem is mounted before the keys load at boot.", file)
	default:
		fix = "Restore it from your backup of the key."
	}
	if k.Problem != facts.KeyFileUnreadable && d.KeyStatus == "available" {
		fix += " While the key is loaded (it is now) you can also write a new key file and rewrap the data key with it: " + newKeyText(d, k.Path) + " — then back the new file up."
	}
	c.emit(cond{name: nameKeyFileProblem, severity: alert.Warning, pool: pool,
		labels:  map[string]string{"pool": pool, "dataset": d.Name},
		summary: fmt.Sprintf("key file of %s: %s %s", d.Name, k.Path, keyFileProblemWords(k)),
		desc: fmt.Sprintf("The key file %s of encryption root %s (keyformat %s) %s: %s %s",
			k.Path, d.Name, strutil.FirstNonEmpty(d.KeyFormat, "-"), keyFileWords(k), keyFileConsequence(k, d.Name), fix),
		evidence: map[string]string{"path": k.Path, "problem": k.Problem, "detail": k.Detail, "mode": k.Mode, "size_bytes": fmt.Sprint(k.SizeBytes)}})
}

// keyFileConsequence: a key file others can read still unlocks, for them
// too; any other problem fails the next load.
func keyFileConsequence(k *facts.KeyFileCheck, name string) string {
	if k.Problem == facts.KeyFileExposed {
		return "whoever can read it can unlock " + name + "."
	}
	return "the next `zfs load-key`, at the next boot, will fail and " + name + " will stay locked."
}

// newKeyText writes a new key of the dataset's keyformat to file and
// changes the wrapping key to it (zfs change-key reads keylocation).
func newKeyText(d *facts.DatasetState, file string) string {
	f := shellWord(file)
	var write string
	switch d.KeyFormat {
	case "raw":
		write = fmt.Sprintf("`(umask 077; head -c 32 /dev/urandom > %s)`", f)
	case "hex":
		write = fmt.Sprintf("`(umask 077; od -An -vtx1 -N32 /dev/urandom | tr -d ' \\n' > %s)`", f)
	default:
		write = fmt.Sprintf("write the new passphrase into %s (mode 600)", f)
	}
	return fmt.Sprintf("%s, then `zfs change-key %s`", write, shellWord(d.Name))
}
