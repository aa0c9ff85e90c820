package rules

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/kernlog"
	"github.com/zwatch/zwatch/model/zfs"
)

// kernelSettings are rules.kernel: disk, link and controller errors in the
// kernel log.
type kernelSettings struct {
	// BurstGap: records about one disk closer together than this are one
	// burst (a controller reset logs dozens of lines in a second).
	BurstGap config.Duration `yaml:"burst_gap" doc:"kernel records about one disk closer than this are one burst"`
	// Bursts within Window on one disk are critical; the first is a warning.
	Bursts int             `yaml:"bursts" doc:"this many bursts within window on one disk → critical (the first → warning)"`
	Window config.Duration `yaml:"window"`
	// Clear: a disk the kernel has logged nothing about for this long is
	// resolved.
	Clear config.Duration `yaml:"clear" doc:"nothing logged about the disk for this long → resolved"`
}

var kernelConfig = defineConfig("kernel", kernelSettings{
	BurstGap: config.Duration(time.Minute), Bursts: 3, Window: config.Duration(time.Hour), Clear: config.Duration(24 * time.Hour),
})

func (k kernelSettings) validate(p string, errs *config.Errors) {
	config.CheckMinDuration(errs, p+".burst_gap", k.BurstGap, time.Second)
	config.CheckMinDuration(errs, p+".window", k.Window, time.Minute)
	config.CheckMinDuration(errs, p+".clear", k.Clear, time.Minute)
	if k.Bursts < 2 {
		errs.Add(p+".bursts", k.Bursts, "must be at least 2 (the first burst is the warning; this many within kernel.window are critical)")
	}
	if k.BurstGap.D() >= k.Window.D() {
		errs.Add(p+".burst_gap", config.FormatDuration(k.BurstGap.D()), "must be shorter than kernel.window (%s)", config.FormatDuration(k.Window.D()))
	}
}

func kernelDiskErrorsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.KernelLog},
		Eval:  kernelEval(ruleKernelDiskErrors),
		Config: []config.RuleSection{
			kernelConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameKernelDiskErrors,
			Thresholds: kernelThresholds(),
			Severity:   "warning; critical at `kernel.bursts` bursts",
			Condition: "the kernel logged failed I/O or medium errors for a disk (block layer, SCSI sense, libata, NVMe); records closer than `kernel.burst_gap` ({kernel.burst_gap}) are one burst; " +
				"critical at `kernel.bursts` ({kernel.bursts}) bursts within `kernel.window` ({kernel.window}); resolves after `kernel.clear` ({kernel.clear}) without one",
		}},
		Memory: []memoryDef{kernelMemory},
	}
}

func linkResetsRule() Rule {
	return Rule{
		Reads: []facts.Kind{facts.KernelLog},
		Eval:  kernelEval(ruleLinkResets),
		Config: []config.RuleSection{
			kernelConfig,
		},
		Alerts: []AlertInfo{{
			Name:       nameLinkResets,
			Thresholds: kernelThresholds(),
			Severity:   "warning; critical at `kernel.bursts` bursts",
			Condition: "the kernel reset a disk's link or saw it fail (SATA resets, SError interface bits, slow or down links, USB and UAS resets, NVMe controller resets); names the cable, backplane, power or USB enclosure; " +
				"bursts, thresholds and `kernel.clear` as KernelDiskErrors",
		}},
		Memory: []memoryDef{kernelMemory},
	}
}

func kernelThresholds() []Threshold {
	return kernelConfig.thresholds("burst_gap", "bursts", "window", "clear")
}

// nameKernelDiskErrors: the kernel could not read or write a disk. It says
// so before ZFS counts an error (ZFS retries, and a read that succeeds on
// retry is no ZFS error) and before SMART's next round. One burst is a
// warning; bursts that keep coming within rules.kernel.window are critical.
func ruleKernelDiskErrors(c *evalCtx, d *kernelDisk) {
	k := &d.Media
	if !k.active() {
		return
	}
	what := "failed I/O"
	if k.Counts[string(kernlog.KindMediumError)] > 0 {
		what = "medium errors (sectors it could not read or write)"
	}
	desc := fmt.Sprintf("The kernel logged %s on %s: %s, in %s. ZFS retries such I/O, so its counters may not show it yet. "+
		"Check the disk's SMART data, make sure its pool has redundancy, and plan a replacement; a disk that also shows LinkResets may be fine behind a bad cable or enclosure.",
		what, kernelWho(d), kindsText(k), burstsText(c, k))
	emitKernel(c, d, k, nameKernelDiskErrors, desc, kernelRepl(c, d))
}

// nameLinkResets: the link to the disk failed, not (necessarily) the disk.
// SATA resets and SError interface bits, USB and UAS resets, and NVMe
// controller resets mostly come from the cable, the backplane, power or a
// USB enclosure's bridge: the alert names the likely part for the transport.
func ruleLinkResets(c *evalCtx, d *kernelDisk) {
	k := &d.Link
	if !k.active() {
		return
	}
	part := linkSuspect(d.Transport)
	desc := fmt.Sprintf("The kernel logged link trouble with %s: %s, in %s. %s is the likely cause, more than the disk itself: reseat or replace it. "+
		"If the resets go on with another cable or port, check the disk's SMART data.",
		kernelWho(d), kindsText(k), burstsText(c, k), upperFirst(part))
	// No replacement guide: the disk is most likely fine (as SmartCRC).
	emitKernel(c, d, k, nameLinkResets, desc, nil)
}

// emitKernel reports one kernel alert about a disk. Its count is the
// episode's largest count of one kind, about the failed requests (each
// logs one line of several kinds: "3 I/O errors and 3 failed commands" is
// 3), so more page again only at the next power of ten; a burst that
// makes it critical pages as an escalation.
func emitKernel(c *evalCtx, d *kernelDisk, k *kernelEpisode, name, desc string, repl *alert.Replacement) {
	sev := alert.Warning
	bursts := len(k.Bursts)
	if bursts >= kernelConfig.of(c.cfg).Bursts {
		sev = alert.Critical
	}
	if k.Example != "" {
		desc += "\nThe kernel said, for example: " + k.Example
	}
	ev := map[string]string{"ref": d.Ref, "bursts": fmt.Sprint(bursts), "records": itoa(k.total()),
		"first": k.First.UTC().Format(time.RFC3339), "last": k.Last.UTC().Format(time.RFC3339)}
	for kind, n := range k.Counts {
		ev[kind] = itoa(n)
	}
	if d.Transport != "" {
		ev["transport"] = d.Transport
	}
	if d.ByID != "" {
		ev["by_id"] = d.ByID
	}
	label := d.Serial
	if label == "" {
		label = d.Ref
	}
	c.emit(cond{name: name, severity: sev, serial: d.Serial, count: k.largest(),
		labels:  map[string]string{"disk": label},
		summary: kernelWhere(c, d) + ": " + kindsText(k) + spanText(k),
		desc:    desc, evidence: ev, repl: repl})
}

// kernelWho is "sdb (WD-WX32D7088AF1)", or the port when no disk is known.
func kernelWho(d *kernelDisk) string {
	name := d.Kernel
	if name == "" {
		name = d.Ref
	}
	if d.Serial != "" && d.Serial != name {
		return name + " (" + d.Serial + ")"
	}
	return name
}

// kernelWhere is kernelWho and, when the disk is a pool member, its place.
func kernelWhere(c *evalCtx, d *kernelDisk) string {
	who := kernelWho(d)
	if l := c.h.leafOfSerial(d.Serial); l != nil {
		return who + " in " + zfs.Place(l.Pool, l.Top)
	}
	return who
}

// kernelRepl is the replacement context: the disk, and its vdev when known.
func kernelRepl(c *evalCtx, d *kernelDisk) *alert.Replacement {
	if d.Serial == "" {
		return nil
	}
	id := c.h.identity(d.Serial)
	if id == nil {
		id = &disk.Identity{Serial: d.Serial, Kernel: d.Kernel, ByID: d.ByID, Transport: d.Transport}
	}
	return diskRepl(c, d.Serial, id)
}

// kindWords names each kind as a counted thing, singular and plural.
var kindWords = map[kernlog.Kind][2]string{
	kernlog.KindIOError:       {"I/O error", "I/O errors"},
	kernlog.KindBufferIOError: {"buffer I/O error", "buffer I/O errors"},
	kernlog.KindMediumError:   {"medium error", "medium errors"},
	kernlog.KindTargetError:   {"target error", "target errors"},
	kernlog.KindCommandFailed: {"failed command", "failed commands"},
	kernlog.KindTimeout:       {"command timeout", "command timeouts"},
	kernlog.KindLinkReset:     {"link reset", "link resets"},
	kernlog.KindLinkError:     {"link error", "link errors"},
	kernlog.KindLinkSlow:      {"slow link response", "slow link responses"},
	kernlog.KindLinkDown:      {"link down", "link downs"},
}

// kindsText is "3 I/O errors and 3 failed commands": the kinds in the
// order of kernlog.Kinds(), the block layer's one line per failed request
// before the SCSI and ATA detail lines of the same request, resets before
// what they follow from.
func kindsText(k *kernelEpisode) string {
	var kinds []string
	for _, kind := range kernlog.Kinds() {
		if k.Counts[string(kind)] > 0 {
			kinds = append(kinds, string(kind))
		}
	}
	var unknown []string
	for kind, n := range k.Counts {
		if _, known := kindWords[kernlog.Kind(kind)]; !known && n > 0 {
			unknown = append(unknown, kind)
		}
	}
	sort.Strings(unknown)
	parts := make([]string, 0, len(k.Counts))
	for _, kind := range append(kinds, unknown...) {
		n := k.Counts[kind]
		w, ok := kindWords[kernlog.Kind(kind)]
		if !ok {
			w = [2]string{kind + " record", kind + " records"}
		}
		word := w[1]
		if n == 1 {
			word = w[0]
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, word))
	}
	return joinAnd(parts)
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// spanText is " in 10 min": how long the episode has lasted so far, to the
// nearest unit.
func spanText(k *kernelEpisode) string {
	d := k.Last.Sub(k.First)
	in := func(unit time.Duration, name string) string {
		return fmt.Sprintf(" in %d %s", (d+unit/2)/unit, name)
	}
	switch {
	case d < time.Second:
		return ""
	case d < time.Minute:
		return in(time.Second, "s")
	case d < time.Hour:
		return in(time.Minute, "min")
	case d < 48*time.Hour:
		return in(time.Hour, "h")
	}
	return in(24*time.Hour, "d")
}

// burstsText is "one burst (critical at 3 bursts within 1h)" or "3 bursts
// within 1h (critical at 3)".
func burstsText(c *evalCtx, k *kernelEpisode) string {
	n, cfg := len(k.Bursts), kernelConfig.of(c.cfg)
	if n == 0 {
		return fmt.Sprintf("bursts that ended more than %s ago (critical at %d bursts within that)", config.FormatDuration(cfg.Window.D()), cfg.Bursts)
	}
	if n == 1 {
		return fmt.Sprintf("one burst (critical at %d bursts within %s)", cfg.Bursts, config.FormatDuration(cfg.Window.D()))
	}
	return fmt.Sprintf("%d bursts within %s (critical at %d)", n, config.FormatDuration(cfg.Window.D()), cfg.Bursts)
}

// linkSuspect names the part that most likely fails for a transport.
func linkSuspect(transport string) string {
	switch transport {
	case disk.TransportUSB:
		return "the USB enclosure, its bridge chip or its power supply (or the USB cable)"
	case disk.TransportSATA:
		return "the SATA cable, the backplane slot or the disk's power"
	case disk.TransportSAS, disk.TransportSCSI:
		return "the SAS cable, the backplane or expander, or the disk's power"
	case disk.TransportNVMe:
		return "the M.2/PCIe slot or riser, power (including APST power-saving states) or the drive's firmware"
	}
	return "the cable, backplane, power or USB enclosure"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
