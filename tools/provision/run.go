package provision

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/internal/units"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/disk"
	"github.com/zwatch/zwatch/model/zfs"
)

// Errors Run returns, for the CLI to map to exit codes.
var (
	// ErrChecksFailed: a pre-flight check failed; nothing was changed.
	ErrChecksFailed = errors.New("pre-flight checks failed: nothing was changed")
	// ErrNotConfirmed: --apply without --yes, and the pool name was not typed.
	ErrNotConfirmed = errors.New("not confirmed: nothing was changed")
	// ErrDiffers: the pool exists and its layout differs from the plan.
	ErrDiffers = errors.New("the pool exists and differs from the plan")
	// ErrVerify: the pool was created but is not ONLINE with the planned layout.
	ErrVerify = errors.New("the pool was created but does not look as planned")
)

// Options for Run.
type Options struct {
	Plan *Plan
	// Apply runs the commands; without it Run prints them and changes nothing.
	Apply bool
	// Wipe allows disks that carry partition tables, filesystems or labels
	// of an exported pool: their signatures are erased (with a backup).
	Wipe bool
	// Yes skips typing the pool name to confirm --apply.
	Yes bool
	Out io.Writer
	// In is where the confirmation and a passphrase are read from, a line
	// each. The CLI should hand a terminal with echo off for passphrases.
	In   io.Reader
	Host Host
}

// ApplyError is a failure half way through --apply.
type ApplyError struct {
	Step  int // index of the failed step
	Steps []Step
	Err   error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("step %d of %d failed (%s): %v", e.Step+1, len(e.Steps), e.Steps[e.Step].String(), e.Err)
}

func (e *ApplyError) Unwrap() error { return e.Err }

// Run provisions opts.Plan on opts.Host: it resolves and checks the disks,
// prints the plan as commands, and with Apply runs them, verifies the pool
// and prints the zwatch config stanza. Against an existing pool it reports
// "already provisioned" and the differences.
func Run(ctx context.Context, opts Options) error {
	if opts.Plan == nil {
		return errors.New("provision: no plan")
	}
	if opts.Host == nil {
		return errors.New("provision: no host")
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	r := &runner{ctx: ctx, opts: opts, out: out, in: bufio.NewReader(orEmpty(opts.In))}
	in, err := Inspect(ctx, opts.Host, opts.Plan, InspectOptions{Wipe: opts.Wipe})
	if err != nil {
		return err
	}
	if in.Exists {
		return r.reconcile(in)
	}
	return r.provision(in)
}

func orEmpty(r io.Reader) io.Reader {
	if r == nil {
		return strings.NewReader("")
	}
	return r
}

type runner struct {
	ctx  context.Context
	opts Options
	out  io.Writer
	in   *bufio.Reader
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.out, format, args...) }

// PrintInspection writes the disks, checks and layout summary.
func PrintInspection(w io.Writer, in *Inspection) {
	if len(in.Disks) > 0 {
		fmt.Fprintln(w, "Disks")
		for _, d := range in.Disks {
			id := d.ID
			fmt.Fprintf(w, "  %-8s %s\n", id.Kernel, devOf(id))
			var f []string
			if id.Model != "" {
				f = append(f, id.Model)
			}
			if id.Serial != "" {
				f = append(f, "serial "+id.Serial)
			}
			f = append(f, units.Decimal(id.SizeBytes))
			f = append(f, fmt.Sprintf("sectors %d logical / %d physical", id.LogicalSector, id.PhysicalSector))
			if id.Transport != "" {
				f = append(f, id.Transport)
			}
			if id.RotationRPM == 0 {
				f = append(f, "SSD")
			} else {
				f = append(f, "spinning")
			}
			fmt.Fprintf(w, "           %s\n", strings.Join(f, ", "))
			if d.Ref.Name != devOf(id) {
				fmt.Fprintf(w, "           named %q at %s\n", d.Ref.Name, d.Ref.Path)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Checks")
	for _, c := range in.Checks {
		fmt.Fprintf(w, "  %s  %-12s %s: %s\n", c.Status, c.Check, c.Subject, c.Reason)
		if c.Fix != "" && c.Status != Pass {
			fmt.Fprintf(w, "        fix: %s\n", c.Fix)
		}
		if c.Detail != "" {
			for _, l := range strings.Split(c.Detail, "\n") {
				fmt.Fprintf(w, "        | %s\n", l)
			}
		}
	}
	if in.Summary != "" {
		fmt.Fprintf(w, "\nLayout\n  %s\n", in.Summary)
	}
}

// PrintSteps writes the steps as a script a person can read and paste.
func PrintSteps(w io.Writer, steps []Step) {
	for _, s := range steps {
		if s.Why != "" {
			fmt.Fprintf(w, "  # %s\n", s.Why)
		}
		for _, l := range strings.Split(renderStep(s), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

// renderStep prints zpool create over several lines, one vdev per line.
func renderStep(s Step) string {
	if s.File != nil || !s.CreatesPool {
		return s.String()
	}
	var lines []string
	cur := []string{}
	flush := func() {
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, " "))
			cur = nil
		}
	}
	a := s.Argv
	cur = append(cur, shellQuote(a[0]), shellQuote(a[1]))
	flush()
	i := 2
	var opt []string
	for i+1 < len(a) && (a[i] == "-o" || a[i] == "-O" || a[i] == "-m") {
		opt = append(opt, a[i]+" "+shellQuote(a[i+1]))
		i += 2
	}
	// -o options on one line, -O options on another.
	var po, do []string
	for _, o := range opt {
		if strings.HasPrefix(o, "-o ") {
			po = append(po, o)
		} else {
			do = append(do, o)
		}
	}
	if len(po) > 0 {
		lines = append(lines, "    "+strings.Join(po, " "))
	}
	for len(do) > 0 {
		n := min(len(do), 4)
		lines = append(lines, "    "+strings.Join(do[:n], " "))
		do = do[n:]
	}
	if i < len(a) {
		lines = append(lines, "    "+shellQuote(a[i]))
		i++
	}
	words := map[string]bool{"mirror": true, "raidz1": true, "raidz2": true, "raidz3": true, "special": true, "log": true, "cache": true, "spare": true}
	for ; i < len(a); i++ {
		if words[a[i]] {
			lines = append(lines, "    "+a[i])
		} else {
			lines = append(lines, "      "+shellQuote(a[i]))
		}
	}
	return strings.Join(lines, " \\\n")
}

func (r *runner) provision(in *Inspection) error {
	p := r.opts.Plan
	r.printf("zwatch provision: pool %s\n\n", p.Pool)
	PrintInspection(r.out, in)
	r.printf("\n")
	if in.Plan == nil {
		r.printf("No plan: the disks above could not all be resolved to /dev/disk/by-id names.\n")
		return ErrChecksFailed
	}
	steps := Steps(in.Plan)
	failed := in.Failed()
	switch {
	case !r.opts.Apply && failed:
		r.printf("Plan (would not run: fix the FAIL checks above first). Nothing has been changed.\n")
	case !r.opts.Apply:
		r.printf("Plan. Nothing has been changed; run again with --apply to run these commands:\n")
	default:
		r.printf("Plan:\n")
	}
	PrintSteps(r.out, steps)
	r.printf("\n")
	r.encryptionReminder(in.Plan, false)
	if !r.opts.Apply {
		r.printf("After --apply, zwatch prints the config that watches the new pool:\n\n%s", indent(WatchStanza(in.Plan), "  "))
		if failed {
			return ErrChecksFailed
		}
		return nil
	}
	if failed {
		r.printf("Not applying: %d check(s) FAIL. Nothing has been changed.\n", countStatus(in.Checks, Fail))
		return ErrChecksFailed
	}
	if !r.opts.Yes {
		r.printf("This creates pool %s on the disks above%s. Type the pool name to go on: ", p.Pool, wipeNote(in.Plan))
		line, _ := r.in.ReadString('\n')
		if strings.TrimSpace(line) != p.Pool {
			r.printf("\nNot confirmed. Nothing has been changed.\n")
			return ErrNotConfirmed
		}
	}
	if e := in.Plan.Encryption; e != nil && e.Keyformat == KeyPassphrase {
		pass, err := r.readPassphrase(p.Pool)
		if err != nil {
			r.printf("%v. Nothing has been changed.\n", err)
			return err
		}
		for i := range steps {
			if steps[i].Secret && steps[i].File != nil {
				steps[i].File.Content = pass
			}
		}
	}
	if err := r.apply(steps); err != nil {
		return err
	}
	if err := r.verify(in.Plan); err != nil {
		return err
	}
	r.encryptionReminder(in.Plan, true)
	r.printf("Start watching it: merge this into /etc/zwatch/zwatch.yaml (listing smart.devices replaces the automatic scan, so keep any disks already listed):\n\n%s", indent(WatchStanza(in.Plan), "  "))
	return nil
}

func wipeNote(p *Plan) string {
	if len(p.Wipe) == 0 {
		return ""
	}
	return fmt.Sprintf(", erasing the signatures on %d device(s) first", len(p.Wipe))
}

func countStatus(cs []CheckResult, st Status) int {
	n := 0
	for _, c := range cs {
		if c.Status == st {
			n++
		}
	}
	return n
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		if l == "\n" {
			b.WriteString(l)
			continue
		}
		b.WriteString(pre + l)
	}
	return b.String()
}

func (r *runner) readPassphrase(pool string) ([]byte, error) {
	r.printf("\nPassphrase for pool %s (8 to 512 characters; typed at every boot): ", pool)
	a, _ := r.in.ReadString('\n')
	r.printf("\nAgain: ")
	b, _ := r.in.ReadString('\n')
	r.printf("\n")
	a, b = strings.TrimRight(a, "\r\n"), strings.TrimRight(b, "\r\n")
	switch {
	case a != b:
		return nil, errors.New("the passphrases differ")
	case len(a) < 8 || len(a) > 512:
		return nil, errors.New("a ZFS passphrase has 8 to 512 characters")
	}
	return []byte(a), nil
}

func (r *runner) encryptionReminder(p *Plan, done bool) {
	e := p.Encryption
	if e == nil {
		return
	}
	bar := strings.Repeat("!", 72)
	if e.Keyformat == KeyPassphrase {
		if done {
			r.printf("%s\n!! Pool %s is encrypted with your passphrase. After every boot run:\n!!     zfs load-key -r %s && zfs mount -a\n!! Without the passphrase the data is gone for good: store it in a password manager.\n%s\n\n", bar, p.Pool, p.Pool, bar)
		}
		return
	}
	kf := p.keyFile()
	verb := "will be"
	if done {
		verb = "is"
	}
	r.printf("%s\n!! BACK UP THE KEY. The only key to pool %s %s %s\n!! Lose it (a dead boot disk, a reinstall) and every byte in the pool is lost.\n!! Copy it off this machine now, e.g.:  scp root@$(hostname):%s .\n!! and keep a copy offline (base64 %s, printed and locked away).\n%s\n\n",
		bar, p.Pool, verb, kf, shellQuote(kf), shellQuote(kf), bar)
}

// apply runs the steps in order; at the first failure it prints what was
// done, what was not, and how to undo it (without running any of that).
func (r *runner) apply(steps []Step) error {
	h := r.opts.Host
	for i, s := range steps {
		r.printf("[%d/%d] %s\n", i+1, len(steps), firstLine(s.String()))
		var err error
		if s.File != nil {
			err = h.WriteFile(s.File.Path, s.File.Content, s.File.Mode)
		} else {
			var res execx.Result
			res, err = h.Run(r.ctx, s.Argv)
			if o := strings.TrimSpace(string(res.Stdout)); o != "" && err == nil {
				r.printf("%s\n", indent(o+"\n", "      "))
			}
		}
		if err != nil {
			ae := &ApplyError{Step: i, Steps: steps, Err: err}
			r.printAccount(ae)
			return ae
		}
	}
	r.printf("\n")
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// printAccount tells what a half-done run did and how to undo it.
func (r *runner) printAccount(ae *ApplyError) {
	st := ae.Steps
	r.printf("\nFAILED at step %d of %d: %s\n", ae.Step+1, len(st), firstLine(st[ae.Step].String()))
	r.printf("  error: %v\n", ae.Err)
	r.printf("\nDone before the failure:\n")
	if ae.Step == 0 {
		r.printf("  nothing: no change was made\n")
	}
	for i := 0; i < ae.Step; i++ {
		r.printf("  %d. %s\n", i+1, firstLine(st[i].String()))
	}
	if ae.Step+1 < len(st) {
		r.printf("\nNot done:\n")
		for i := ae.Step + 1; i < len(st); i++ {
			r.printf("  %d. %s\n", i+1, firstLine(st[i].String()))
		}
	}
	var undo []string
	for i := ae.Step - 1; i >= 0; i-- {
		if st[i].Undo != "" {
			undo = append(undo, st[i].Undo)
		}
	}
	if len(undo) > 0 {
		r.printf("\nTo undo what was done, in this order (zwatch runs none of it; read each first):\n")
		for _, u := range undo {
			r.printf("  %s\n", u)
		}
	}
	r.printf("\nOr fix the cause and finish by hand with the steps not done. Running zwatch provision again compares the pool with the plan and offers the missing datasets.\n")
}

// verify checks the new pool is ONLINE with the planned layout.
func (r *runner) verify(p *Plan) error {
	pool, err := r.status(p.Pool)
	if err != nil {
		r.printf("Could not verify: %v\n", err)
		return fmt.Errorf("%w: %v", ErrVerify, err)
	}
	diffs := r.layoutDiffs(p, pool)
	if pool.State != zfs.StateOnline {
		diffs = append([]string{fmt.Sprintf("state is %s, not ONLINE", pool.State)}, diffs...)
	}
	if len(diffs) > 0 {
		r.printf("Verify (zpool status -P %s): the pool does not look as planned:\n", p.Pool)
		for _, d := range diffs {
			r.printf("  - %s\n", d)
		}
		return ErrVerify
	}
	r.printf("Verified (zpool status -P %s): ONLINE, layout as planned: %s\n\n", p.Pool, strings.Join(layoutWords(p), "; "))
	return nil
}

func (r *runner) status(name string) (*zfs.Pool, error) {
	out, _, err := runOut(r.ctx, r.opts.Host, "zpool", "status", "-P", name)
	if err != nil {
		return nil, err
	}
	pools, err := zfs.ParseStatusText(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	for _, p := range pools {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("zpool status shows no pool %s", name)
}

// layoutWords describes the planned vdevs per class, disks by key.
func layoutWords(p *Plan) []string {
	var out []string
	for _, c := range planLayout(p, func(s string) string { return s }) {
		out = append(out, c)
	}
	return out
}

// planLayout lists "class: layout(disk,disk)" for every vdev, with disk
// names mapped by key and sorted, so two layouts compare as strings.
func planLayout(p *Plan, key func(string) string) []string {
	var out []string
	add := func(class string, vs []VdevSpec) {
		for _, v := range vs {
			ks := make([]string, len(v.Disks))
			for i, d := range v.Disks {
				ks[i] = key(d)
			}
			sort.Strings(ks)
			out = append(out, fmt.Sprintf("%s: %s(%s)", class, v.Layout, strings.Join(ks, ", ")))
		}
	}
	add("data", p.Vdevs)
	add("special", p.Special)
	add("log", p.Log)
	for _, d := range p.Cache {
		out = append(out, fmt.Sprintf("cache: disk(%s)", key(d)))
	}
	for _, d := range p.Spares {
		out = append(out, fmt.Sprintf("spare: disk(%s)", key(d)))
	}
	sort.Strings(out)
	return out
}

// poolLayout is planLayout for an existing pool.
func poolLayout(pool *zfs.Pool, key func(string) string) []string {
	var out []string
	for _, cv := range pool.AllVdevs() {
		class := map[string]string{"data": "data", "special": "special", "logs": "log", "cache": "cache", "spares": "spare", "dedup": "dedup"}[cv.Class]
		v := cv.Vdev
		layout := v.Type
		switch v.Type {
		case zfs.VdevRaidz:
			layout = fmt.Sprintf("raidz%d", v.Parity)
		case zfs.VdevDisk, zfs.VdevFile:
			layout = LayoutDisk
		}
		var ks []string
		for _, l := range v.Leaves() {
			ks = append(ks, key(l.Path))
		}
		sort.Strings(ks)
		out = append(out, fmt.Sprintf("%s: %s(%s)", class, layout, strings.Join(ks, ", ")))
	}
	sort.Strings(out)
	return out
}

// layoutDiffs compares the plan's vdevs with the pool's, disks matched by
// identity (a by-id name and its -part1 are one disk).
func (r *runner) layoutDiffs(p *Plan, pool *zfs.Pool) []string {
	ids, _ := disk.Discover(r.opts.Host.Root())
	res := disk.NewResolver(r.opts.Host.Root(), ids)
	key := func(name string) string {
		if name == "" {
			return "?"
		}
		id, err := res.Resolve(name, "")
		if err != nil {
			return strings.TrimSuffix(name, "-part1")
		}
		if id.ByID != "" {
			return id.ByID
		}
		return "/dev/" + id.Kernel
	}
	want, got := planLayout(p, key), poolLayout(pool, key)
	var diffs []string
	gotSet := map[string]int{}
	for _, g := range got {
		gotSet[g]++
	}
	for _, w := range want {
		if gotSet[w] > 0 {
			gotSet[w]--
			continue
		}
		diffs = append(diffs, "planned but not in the pool: "+w)
	}
	for _, g := range got {
		if gotSet[g] > 0 {
			gotSet[g]--
			diffs = append(diffs, "in the pool but not planned: "+g)
		}
	}
	return diffs
}
