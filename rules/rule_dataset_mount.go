package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/alert"
)

// eachDataset is the dataset rules' scope: each filesystem and volume of
// the latest datasets fact, which the engine keeps for the snapshot and
// capacity rules too.
var eachDataset = scopeOf(facts.Datasets, scopeDatasets,
	func(d *facts.DatasetsData) []facts.DatasetState { return d.Datasets }).
	keptIn(func(h *hostState) *facts.DatasetsData { return h.datasets })

func datasetNotMountedRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.Datasets},
		Eval:  eachDataset.each(ruleDatasetNotMounted),
		Config: []config.RuleSection{
			datasetsConfig, replicationConfig,
		},
		Alerts: []AlertInfo{{
			Name: nameDatasetNotMounted,
			// Longer than the datasets collector's 5 min interval: a dataset
			// unmounted for a moment (a zfs rename, a receive) is no news.
			For:       10 * time.Minute,
			Severity:  "warning; critical when files were written into its mountpoint directory on the filesystem below",
			Condition: "filesystem with canmount=on, a mountpoint path, mounted=no, its key loaded (or not encrypted); not in `datasets.ignore`; a partial receive or a `replication.targets` dataset with nothing underneath is left alone; `for` {for}",
		}},
	}
}

// meantToMount: a filesystem zfs mount -a mounts (canmount=on and a path;
// not none, legacy, or a volume's "-").
func meantToMount(d *facts.DatasetState) bool {
	return d.Type != "volume" && d.CanMount == "on" && strings.HasPrefix(d.Mountpoint, "/")
}

// nameDatasetNotMounted: a filesystem that should be mounted and is not.
// Whatever is written to its mountpoint then lands in the directory on the
// filesystem below (the root disk, an SD card), silently; mounting later
// hides it. Locked datasets are DatasetLocked's.
func ruleDatasetNotMounted(c *evalCtx, d *facts.DatasetState) {
	if !meantToMount(d) || d.Mounted != "no" || d.KeyStatus == "unavailable" || datasetIgnored(c, d.Name) {
		return
	}
	u := d.Underneath
	if !wroteUnderneath(u) {
		if d.ReceiveResumeToken != "" {
			return // zfs receive -s -u left it so: ReplicationInterrupted says what to do
		}
		if _, target := firstAge(replicationConfig.of(c.cfg).Targets, d.Name); target {
			return // backups are received with zfs receive -u, not to be mounted
		}
	}
	pool := poolOfDataset(d.Name)
	sev := alert.Warning
	summary := fmt.Sprintf("dataset %s is not mounted at %s", d.Name, d.Mountpoint)
	if wroteUnderneath(u) {
		sev = alert.Critical
		summary += ": " + filesWritten(u) + " written underneath"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (canmount=on, mountpoint %s) is not mounted, so what is written to %s lands on the filesystem below it, not in pool %s.",
		d.Name, d.Mountpoint, d.Mountpoint, pool)
	switch {
	case wroteUnderneath(u):
		b.WriteString(" " + underneathText(c, d))
	case u != nil && u.Error != "":
		fmt.Fprintf(&b, " zwatch could not look into %s (%s): check it with `ls -A %s` before mounting.", u.Path, u.Error, shellWord(d.Mountpoint))
	default:
		if u != nil {
			fmt.Fprintf(&b, " %s is empty.", d.Mountpoint)
		}
		fmt.Fprintf(&b, " Mount it: `zfs mount %s` (it prints why, if it cannot).", shellWord(d.Name))
	}
	fmt.Fprintf(&b, " If it stays unmounted on purpose (a backup received with `zfs receive -u`), `zfs set canmount=noauto %s` or list it in rules.datasets.ignore.", shellWord(d.Name))
	c.emit(cond{name: nameDatasetNotMounted, severity: sev, pool: pool,
		labels:   map[string]string{"pool": pool, "dataset": d.Name},
		summary:  summary,
		desc:     b.String(),
		evidence: underneathEvidence(d)})
}

// wroteUnderneath: the look below the mountpoint found files (perhaps
// before a subdirectory it could not read).
func wroteUnderneath(u *facts.DirContents) bool {
	return u != nil && u.Files > 0
}

// filesWritten says "3 files (12 KiB)", "at least 10000 files (…)" when
// the look stopped at its bound.
func filesWritten(u *facts.DirContents) string {
	n := fmt.Sprintf("%d file", u.Files)
	if u.Files != 1 {
		n += "s"
	}
	if u.Truncated || u.Error != "" {
		n = "at least " + n
	}
	return fmt.Sprintf("%s (%s)", n, units.IEC(u.Bytes))
}

// underneathText tells what was written below an unmounted filesystem and
// the safe way to keep it: move the directory aside, mount (zfs mount
// makes the mountpoint), copy the files in, check, then remove the copy.
func underneathText(c *evalCtx, d *facts.DatasetState) string {
	u := d.Underneath
	mp := d.Mountpoint
	var b strings.Builder
	n, verb := filesWritten(u), "were"
	if u.Files == 1 && !strings.HasPrefix(n, "at least") {
		verb = "was"
	}
	fmt.Fprintf(&b, "%s%s %s written into %s on the filesystem below", strings.ToUpper(n[:1]), n[1:], verb, mp)
	if len(u.Examples) > 0 {
		fmt.Fprintf(&b, " (e.g. %s)", strings.Join(u.Examples, ", "))
	}
	b.WriteString("; mounting hides what is there without deleting it.")
	if u.Error != "" {
		fmt.Fprintf(&b, " Part of it could not be read (%s): check with `ls -A %s`.", u.Error, shellWord(mp))
	}
	if mp == "/" {
		return b.String() + " Copy them somewhere safe before mounting."
	}
	aside := mp + ".zwatch-underneath"
	busy := mountedBelow(c, mp)
	b.WriteString(" To keep it, move the directory aside, mount, and copy it in:")
	for _, o := range busy {
		fmt.Fprintf(&b, "\n    zfs unmount %s", shellWord(o))
	}
	fmt.Fprintf(&b, "\n    mv %s %s\n    zfs mount %s", shellWord(mp), shellWord(aside), shellWord(d.Name))
	if len(busy) > 0 {
		b.WriteString("\n    zfs mount -a")
	}
	fmt.Fprintf(&b, "\n    cp -a %s/. %s/\nthen check %s and remove %s.", shellWord(aside), shellWord(mp), shellWord(mp), shellWord(aside))
	return b.String()
}

// mountedBelow names the mounted datasets whose mountpoint lies below mp,
// deepest first, the order they unmount in: moving mp aside would move
// their mountpoints too.
func mountedBelow(c *evalCtx, mp string) []string {
	if c.h.datasets == nil {
		return nil
	}
	var below []*facts.DatasetState
	for i := range c.h.datasets.Datasets {
		o := &c.h.datasets.Datasets[i]
		if o.Mounted == "yes" && strings.HasPrefix(o.Mountpoint, strings.TrimSuffix(mp, "/")+"/") {
			below = append(below, o)
		}
	}
	sort.SliceStable(below, func(i, j int) bool {
		return strings.Count(below[i].Mountpoint, "/") > strings.Count(below[j].Mountpoint, "/")
	})
	out := make([]string, len(below))
	for i, o := range below {
		out[i] = o.Name
	}
	return out
}

func underneathEvidence(d *facts.DatasetState) map[string]string {
	ev := map[string]string{"mountpoint": d.Mountpoint, "mounted": d.Mounted, "canmount": d.CanMount}
	if u := d.Underneath; u != nil {
		if u.Error != "" {
			ev["underneath_error"] = u.Error
		}
		if u.Error == "" || u.Files > 0 {
			ev["underneath_files"] = fmt.Sprint(u.Files)
			ev["underneath_bytes"] = itoa(u.Bytes)
			if u.Truncated {
				ev["underneath_truncated"] = "true"
			}
			if len(u.Examples) > 0 {
				ev["underneath_examples"] = strings.Join(u.Examples, ", ")
			}
		}
	}
	return ev
}
