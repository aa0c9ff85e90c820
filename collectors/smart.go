package collectors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/internal/strutil"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/smart"
)

// SmartCollectorName is the smart collector's name in envelopes and errors.
const SmartCollectorName = "smart"

// defaultSmartTimeout bounds one smartctl call: a healthy disk answers in
// well under a second; a dying one can hang in the kernel for minutes.
const defaultSmartTimeout = 30 * time.Second

// defaultUrgentMinInterval bounds urgent reads of one disk: a controller
// reset logs hundreds of lines, and one reading per incident is the news.
const defaultUrgentMinInterval = 5 * time.Minute

// SmartDevice names one disk to read, with the smartctl -d type it needs
// (sat for most USB enclosures, nvme, scsi, megaraid,N), if any.
type SmartDevice struct {
	Device string `yaml:"device"`
	Type   string `yaml:"type"`
}

// SmartConfig is the smart collector's configuration. With no devices
// listed, disks are found with `smartctl --scan-open`.
type SmartConfig struct {
	Smartctl string        `yaml:"smartctl"` // path or name; default "smartctl"
	Devices  []SmartDevice `yaml:"devices"`
	Timeout  time.Duration `yaml:"timeout"` // per smartctl call; default 30s
	// UrgentMinInterval: CollectTarget reads one disk at most this often;
	// default 5m.
	UrgentMinInterval time.Duration `yaml:"urgent_min_interval"`
}

// SmartConfigFrom maps the config's smart section onto the collector's.
func SmartConfigFrom(cfg *config.Config) SmartConfig {
	sc := SmartConfig{Smartctl: cfg.Smart.Smartctl, Timeout: cfg.Smart.Timeout.D(), UrgentMinInterval: cfg.Smart.UrgentMinInterval.D()}
	for _, d := range cfg.Smart.Devices {
		sc.Devices = append(sc.Devices, SmartDevice{Device: d.Device, Type: d.Type})
	}
	return sc
}

// SmartCollector reads every disk's SMART data with smartctl and publishes
// one smart.Report per disk on zwatch.v1.<host>.smart.<serial>. A disk in
// standby is not woken: it is published with InStandby and the age of the
// last full reading. A failing disk never stops the others: its error is
// published as a collector.error naming the disk and the fix.
type SmartCollector struct {
	Config SmartConfig
	Runner *execx.Runner
	// Root is the filesystem root for disk discovery ("/" live).
	Root string
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	last map[string]lastReading // by target key
	// known are the targets of the last full pass by kernel name, so an
	// urgent read uses the type a scan found without scanning (which opens
	// every disk) again.
	known map[string]smartTarget
	// urgentAt is when each disk (by kernel name) was last read urgently.
	urgentAt map[string]time.Time
}

// lastReading is the newest full report of a disk, kept for standby.
type lastReading struct {
	report smart.Report
	at     time.Time
}

// NewSmartCollector returns a collector for cfg. A nil runner gets one with
// the configured timeout.
func NewSmartCollector(cfg SmartConfig, runner *execx.Runner) *SmartCollector {
	if cfg.Smartctl == "" {
		cfg.Smartctl = "smartctl"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultSmartTimeout
	}
	if cfg.UrgentMinInterval <= 0 {
		cfg.UrgentMinInterval = defaultUrgentMinInterval
	}
	if runner == nil {
		runner = execx.New(cfg.Timeout)
	}
	return &SmartCollector{Config: cfg, Runner: runner, Root: "/", last: map[string]lastReading{}}
}

// Name implements Collector.
func (c *SmartCollector) Name() string { return SmartCollectorName }

// smartTarget is one disk to read.
type smartTarget struct {
	dev string
	typ string
	id  *disk.Identity
	// openErr is what smartctl --scan-open said about the device.
	openErr string
	// awake: read without -n standby. Set for the disk the kernel log or
	// ZFS just named: it is erroring, so it is spinning anyway.
	awake bool
}

// key tells apart disks that share a device name behind a RAID controller.
func (t smartTarget) key() string { return t.dev + "|" + t.typ }

// SmartReading is what one pass over the disks found.
type SmartReading struct {
	// Disks are the disks smartctl could read, failing ones included.
	Disks []SmartDisk
	// Errors say, per disk, why there is no report; with no Target, why no
	// disk could be listed.
	Errors []facts.CollectorErrorData
}

// SmartDisk is one disk's report with the subject token it is published
// under: its serial, else the device smartctl was given.
type SmartDisk struct {
	Target string
	Report *smart.Report
}

// Collect implements Collector: one smart message per disk read and one
// collector.error per disk that could not be, each published as soon as it
// is known, so a hanging disk does not hold back the others' news. Collect
// returns an error only when publishing fails or ctx ends.
func (c *SmartCollector) Collect(ctx context.Context, pub Publisher) error {
	return c.pass(ctx, c.publishReport(ctx, pub), c.publishError(ctx, pub))
}

func (c *SmartCollector) publishReport(ctx context.Context, pub Publisher) func(SmartDisk) error {
	return func(d SmartDisk) error {
		if err := Publish(ctx, pub, facts.Smart, c.Name(), *d.Report, d.Target); err != nil {
			return fmt.Errorf("publish smart report for %s: %w", d.Report.Device, err)
		}
		return nil
	}
}

func (c *SmartCollector) publishError(ctx context.Context, pub Publisher) func(facts.CollectorErrorData) error {
	return func(ce facts.CollectorErrorData) error {
		if err := Publish(ctx, pub, facts.CollectorError, c.Name(), ce); err != nil {
			return fmt.Errorf("publish smart error for %s: %w", ce.Target, err)
		}
		return nil
	}
}

// Read reads every disk once. A disk that cannot be read never stops the
// others; its error is in the reading, so Read fails only when ctx ends.
func (c *SmartCollector) Read(ctx context.Context) (SmartReading, error) {
	var r SmartReading
	err := c.pass(ctx,
		func(d SmartDisk) error { r.Disks = append(r.Disks, d); return nil },
		func(ce facts.CollectorErrorData) error { r.Errors = append(r.Errors, ce); return nil })
	return r, err
}

// pass reads every disk once, handing on each report or error as it comes;
// an error from a handler ends the pass.
func (c *SmartCollector) pass(ctx context.Context, read func(SmartDisk) error, failed func(facts.CollectorErrorData) error) error {
	targets, err := c.targets(ctx)
	if err != nil {
		return failed(c.errorFor(smartTarget{}, err))
	}
	c.noteTargets(targets)
	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := c.readOne(ctx, t)
		if err == nil {
			if err := read(d); err != nil {
				return err
			}
			continue
		}
		if err := failed(c.errorFor(t, err)); err != nil {
			return err
		}
		if execx.KindOf(err) == execx.KindMissing {
			return nil // without smartctl every other disk fails the same way
		}
	}
	return nil
}

// targets lists the configured devices, or scans for them. Disk identities
// come from sysfs and /dev/disk/by-id; a machine where that fails still
// gets its SMART readings, only without by-id names.
func (c *SmartCollector) targets(ctx context.Context) ([]smartTarget, error) {
	ids, _ := disk.Discover(c.root())
	res := disk.NewResolver(c.root(), ids)
	var ts []smartTarget
	if len(c.Config.Devices) > 0 {
		for _, d := range c.Config.Devices {
			ts = append(ts, smartTarget{dev: d.Device, typ: d.Type, id: lookup(res, d.Device)})
		}
		return ts, nil
	}
	scan, err := c.scan(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range scan {
		ts = append(ts, smartTarget{dev: d.Name, typ: d.Type, id: lookup(res, d.Name), openErr: d.OpenError})
	}
	return ts, nil
}

func (c *SmartCollector) scan(ctx context.Context) ([]disk.ScanDevice, error) {
	cctx, cancel := context.WithTimeout(ctx, c.Config.Timeout)
	defer cancel()
	res, err := c.Runner.Run(cctx, c.Config.Smartctl, "--scan-open", "--json")
	if err != nil && execx.KindOf(err) != execx.KindFailed {
		return nil, err
	}
	devs, perr := disk.ScanOpen(bytes.NewReader(res.Stdout))
	if perr != nil {
		if err != nil {
			return nil, err
		}
		return nil, &ParseError{Source: "smartctl --scan-open --json", Err: perr}
	}
	return devs, nil
}

// nvmeController matches smartctl's NVMe controller names (/dev/nvme0),
// whose disk is the first namespace (nvme0n1).
var nvmeController = regexp.MustCompile(`^nvme\d+$`)

func lookup(res *disk.Resolver, dev string) *disk.Identity {
	id, err := res.Resolve(dev, "")
	if err != nil && nvmeController.MatchString(filepath.Base(dev)) {
		id, err = res.Resolve(filepath.Base(dev)+"n1", "")
	}
	if err != nil || id.Absent {
		return nil
	}
	return &id
}

// readOne reads one disk; the error says why there is no report.
func (c *SmartCollector) readOne(ctx context.Context, t smartTarget) (SmartDisk, error) {
	if t.openErr != "" {
		return SmartDisk{}, classifyMessages(t, []string{t.openErr})
	}
	rep, err := c.read(ctx, t)
	if err != nil {
		return SmartDisk{}, err
	}
	if rep.InStandby {
		rep = c.standbyReport(t, rep)
	} else if err := failure(t, rep); err != nil {
		return SmartDisk{}, err
	} else {
		mergeIdentity(rep, t)
		c.remember(t, rep)
	}
	return SmartDisk{Target: strutil.FirstNonEmpty(rep.Serial, t.dev), Report: rep}, nil
}

// read runs smartctl on one disk. -n standby makes smartctl exit 2 without
// touching a spun-down disk. (smartd's "-n standby,q" is not valid for
// smartctl, which rejects it as a bad argument.)
func (c *SmartCollector) read(ctx context.Context, t smartTarget) (*smart.Report, error) {
	args := smartArgs(t)
	cctx, cancel := context.WithTimeout(ctx, c.Config.Timeout)
	defer cancel()
	res, runErr := c.Runner.Run(cctx, c.Config.Smartctl, args...)
	// smartctl reports findings through its exit status: a non-zero exit
	// with JSON is data. Anything else (missing, timeout, busy) is not.
	if runErr != nil && execx.KindOf(runErr) != execx.KindFailed {
		return nil, runErr
	}
	rep, err := smart.Parse(bytes.NewReader(res.Stdout))
	if err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("%w (output unreadable: %v)", runErr, err)
		}
		return nil, &ParseError{Source: "smartctl " + strings.Join(args, " "), Err: err}
	}
	return rep, nil
}

// smartArgs is smartctl's argv for one disk.
func smartArgs(t smartTarget) []string {
	args := []string{"--json=c", "-a"}
	if !t.awake {
		args = append(args, "-n", "standby")
	}
	if t.typ != "" {
		args = append(args, "-d", t.typ)
	}
	return append(args, t.dev)
}

// failure turns an output that carries no SMART data into an error; nil
// means rep holds a reading (possibly of a failing disk) to publish.
// smartctl exits 1 for a bad command line and also for a device it cannot
// type (unknown USB bridge), and 2 for one it cannot open.
func failure(t smartTarget, rep *smart.Report) error {
	if rep.ExitStatus.Code&3 != 0 {
		return classifyMessages(t, rep.Errors)
	}
	return nil
}

// classifyMessages reads smartctl's messages about a device it could not
// open and says what a person should do.
func classifyMessages(t smartTarget, msgs []string) error {
	all := strings.Join(msgs, "; ")
	l := strings.ToLower(all)
	e := &smartError{kind: execx.KindFailed, target: t.dev, msg: "smartctl could not open " + t.dev}
	if all != "" {
		e.msg += ": " + all
	}
	switch {
	case strings.Contains(l, "invalid argument"):
		e.msg = "smartctl rejected its command line: " + all
		e.fix = "check the configured `type:` for " + t.dev + " and that smartctl is smartmontools 7.0 or newer (`smartctl --version`)"
	case strings.Contains(l, "permission denied"), strings.Contains(l, "operation not permitted"), strings.Contains(l, "error=5"):
		e.kind = execx.KindDenied
		e.fix = "run zwatch as root, or with CAP_SYS_RAWIO (and CAP_SYS_ADMIN for NVMe) and read access to " + t.dev
	case strings.Contains(l, "unknown usb bridge"):
		e.fix = fmt.Sprintf("set `type: sat` for this disk in the smart config: devices: [{device: %s, type: sat}]", t.dev)
	case strings.Contains(l, "unable to detect device type"), strings.Contains(l, "please specify device type"):
		e.fix = fmt.Sprintf("set a `type:` for this disk in the smart config (sat for SATA and most USB disks, nvme, scsi): devices: [{device: %s, type: sat}]", t.dev)
	case strings.Contains(l, "no such device"), strings.Contains(l, "no such file"):
		e.msg = t.dev + " has vanished: " + all
		e.fix = "the disk is gone or was renamed: check `dmesg` and cabling; if it was removed on purpose, drop it from the config; prefer /dev/disk/by-id paths"
	default:
		e.fix = "run `smartctl -a " + t.dev + "` by hand to see why it cannot be read"
	}
	return e
}

// smartError is a per-disk failure with its fix.
type smartError struct {
	kind, target, msg, fix string
}

func (e *smartError) Error() string { return e.msg }

// mergeIdentity adds what sysfs knows to what the disk said about itself.
// smartctl drives USB disks as plain "sat" when it knows the bridge, so the
// sysfs path is the better judge of USB.
func mergeIdentity(rep *smart.Report, t smartTarget) {
	if rep.Device == "" {
		rep.Device = t.dev
	}
	if rep.SmartType == "" {
		rep.SmartType = t.typ
	}
	id := t.id
	if id == nil {
		return
	}
	rep.ByID, rep.Kernel = id.ByID, id.Kernel
	rep.Serial = strutil.FirstNonEmpty(rep.Serial, id.Serial)
	rep.WWN = strutil.FirstNonEmpty(rep.WWN, id.WWN)
	rep.Model = strutil.FirstNonEmpty(rep.Model, id.Model)
	rep.Firmware = strutil.FirstNonEmpty(rep.Firmware, id.Firmware)
	if id.Transport == disk.TransportUSB || rep.Transport == "" {
		rep.Transport = id.Transport
	}
	if rep.SizeBytes == 0 {
		rep.SizeBytes = id.SizeBytes
	}
}

func (c *SmartCollector) remember(t smartTarget, rep *smart.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]lastReading{}
	}
	c.last[t.key()] = lastReading{report: *rep, at: c.now()}
}

// standbyReport describes a sleeping disk with the identity of its last
// reading and that reading's age; health values are left out, not stale.
func (c *SmartCollector) standbyReport(t smartTarget, sb *smart.Report) *smart.Report {
	c.mu.Lock()
	last, ok := c.last[t.key()]
	c.mu.Unlock()
	rep := &smart.Report{
		Device: strutil.FirstNonEmpty(sb.Device, t.dev), SmartType: strutil.FirstNonEmpty(sb.SmartType, t.typ),
		Attributes: []smart.Attribute{}, ExitStatus: sb.ExitStatus, Errors: sb.Errors, InStandby: true,
	}
	if ok {
		l := last.report
		rep.Model, rep.Serial, rep.WWN, rep.Firmware = l.Model, l.Serial, l.WWN, l.Firmware
		rep.Transport, rep.SizeBytes, rep.RotationRPM = l.Transport, l.SizeBytes, l.RotationRPM
		age := int64(c.now().Sub(last.at) / time.Second)
		rep.LastReadingAgeS = &age
	}
	mergeIdentity(rep, t)
	return rep
}

func (c *SmartCollector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *SmartCollector) root() string {
	if c.Root == "" {
		return "/"
	}
	return c.Root
}

// errorFor describes err as a collector.error with the disk as Target and
// the most specific fix known.
func (c *SmartCollector) errorFor(t smartTarget, err error) facts.CollectorErrorData {
	ce := ErrorFor(c.Name(), t.dev, err)
	var se *smartError
	switch {
	case errors.As(err, &se):
		ce.Kind, ce.Fix = se.kind, se.fix
	case ce.Kind == execx.KindMissing:
		ce.Fix = "install smartmontools (apt install smartmontools, dnf install smartmontools) or set `smartctl:` to its full path in the config"
	case ce.Kind == execx.KindDenied:
		ce.Fix = "make smartctl executable for zwatch, and run zwatch as root or with CAP_SYS_RAWIO"
	case ce.Kind == execx.KindTimeout || ce.Kind == execx.KindBusy:
		ce.Fix = "smartctl hangs on this disk: the disk or its controller may be dying; check `dmesg`; zwatch skips it until smartctl returns"
	}
	if ce.Command == "" && t.dev != "" {
		ce.Command = c.Config.Smartctl + " " + strings.Join(smartArgs(t), " ")
	}
	return ce
}
