package collectors

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// ZpoolStatus reads the full pool state from `zpool status`: JSON on
// OpenZFS ≥ 2.3, text everywhere else. It is the one reader of zpool status:
// the daemon polls it, and `zwatch status`, `zwatch disks`, `zwatch replace`
// and the maintenance scheduler call Read or ReadPool.
//
// The format is found by asking: -j first, and text once zpool has rejected
// -j as an invalid option, which it then is not asked again.
type ZpoolStatus struct {
	Runner Runner
	// Zpool is the program's name or path; "" means "zpool".
	Zpool string
	// ShortNames reads vdevs under the names zpool prints by default (no -P)
	// and without -v's list of damaged files: the form `zwatch replace`
	// shows and passes on to `zpool replace`. The daemon reads full paths.
	ShortNames bool
	// TextOnly never asks for -j.
	TextOnly bool
	// Hang, when set, runs when a poll times out (HangProbe): the daemon's
	// poller probes the kernel's pool state at once.
	Hang *HangProbe
	// Log hears, once each, about lines the parser kept as notes because it
	// did not recognise them (a newer OpenZFS may print new sections).
	Log *slog.Logger

	// Urgent, when set, is called with a leaf's path when its READ, WRITE,
	// CKSUM or slow-I/O counter rose since the last poll: the daemon reads
	// that disk's SMART now (Env.Urgent of the smart collector).
	Urgent func(target string)

	mu         sync.Mutex
	noJSON     bool // zpool rejected -j: OpenZFS before 2.3
	noCounters bool // zpool rejected -p: ZoL 0.7, whose counters are approximate
	noSlow     bool // zpool rejected -s: ZoL 0.7 has no slow-I/O column
	seenNotes  map[string]bool
	// counters are each leaf's counters at the last poll, to see rises.
	counters map[string]leafCounters
}

// Name implements Collector.
func (c *ZpoolStatus) Name() string { return "zpool_status" }

// Collect implements Collector.
func (c *ZpoolStatus) Collect(ctx context.Context, pub Publisher) error {
	err := PublishRead(ctx, pub, facts.ZpoolStatus, c.Name(), c.Read)
	c.Hang.Note(err)
	return err
}

// Read reads every pool once.
func (c *ZpoolStatus) Read(ctx context.Context) (facts.StatusData, error) {
	return c.ReadPool(ctx, "")
}

// ReadPool reads one pool once, or every pool when pool is "".
func (c *ZpoolStatus) ReadPool(ctx context.Context, pool string) (facts.StatusData, error) {
	c.mu.Lock()
	tryJSON := !c.noJSON && !c.TextOnly
	c.mu.Unlock()
	if tryJSON {
		res, err := c.Runner.Run(ctx, c.zpool(), c.jsonArgs(pool)...)
		if err == nil {
			return c.parse(zfs.ParseStatusJSON, "json", res.Stdout)
		}
		// Before 2.3 zpool rejects -j; any other failure recurs with the
		// text command and is reported from there.
		if execx.KindOf(err) != execx.KindFailed {
			return facts.StatusData{}, err
		}
		if rejectedOption(res, err) {
			c.mu.Lock()
			c.noJSON = true
			c.mu.Unlock()
		}
	}
	return c.readText(ctx, pool)
}

func (c *ZpoolStatus) readText(ctx context.Context, pool string) (facts.StatusData, error) {
	c.mu.Lock()
	opts := textOptions{counters: !c.noCounters, slow: !c.noSlow}
	c.mu.Unlock()
	var res execx.Result
	var err error
	// At most one retry per option zwatch may drop (-s, -p), each
	// remembered: 0.7 knows neither, 0.8+ both.
	for range 3 {
		res, err = c.Runner.Run(ctx, c.zpool(), c.textArgs(opts, pool)...)
		if err == nil || execx.KindOf(err) != execx.KindFailed || !rejectedOption(res, err) {
			break
		}
		if !c.dropRejected(&opts, rejectedLetter(res, err)) {
			break
		}
	}
	if err != nil {
		return facts.StatusData{}, err
	}
	return c.parse(zfs.ParseStatusText, "text", res.Stdout)
}

// textOptions are the optional flags of the text command.
type textOptions struct {
	counters bool // -p: exact counters
	slow     bool // -s: the SLOW column
}

// dropRejected turns off the option zpool refused (named by letter, or
// the newest one asked for when the letter is unknown) and remembers it;
// false when nothing is left to drop.
func (c *ZpoolStatus) dropRejected(opts *textOptions, letter string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case opts.slow && letter != "p":
		opts.slow, c.noSlow = false, true
	case opts.counters:
		// ZoL 0.7 has no -p for status: fall back to approximate counters.
		opts.counters, c.noCounters = false, true
	default:
		return false
	}
	return true
}

func (c *ZpoolStatus) jsonArgs(pool string) []string {
	args := []string{"status", "-j", "--json-int", "-p"}
	if !c.ShortNames {
		args = append(args, "-P")
	}
	return withPool(args, pool)
}

func (c *ZpoolStatus) textArgs(opts textOptions, pool string) []string {
	args := []string{"status"}
	if opts.counters {
		args = append(args, "-p")
	}
	if opts.slow {
		args = append(args, "-s")
	}
	if !c.ShortNames {
		args = append(args, "-P", "-v")
	}
	return withPool(args, pool)
}

// withPool appends the pool operand. Pool names start with a letter, so
// one cannot be taken for an option.
func withPool(args []string, pool string) []string {
	if pool == "" {
		return args
	}
	return append(args, pool)
}

// rejectedOption tells a zpool that does not know an option it was given
// from one that failed for another reason.
func rejectedOption(res execx.Result, err error) bool {
	const msg = "invalid option"
	var ee *execx.Error
	return bytes.Contains(res.Stderr, []byte(msg)) || errors.As(err, &ee) && strings.Contains(ee.Stderr, msg)
}

// rejectedLetter is the option zpool named ("invalid option 's'"), or "".
func rejectedLetter(res execx.Result, err error) string {
	text := string(res.Stderr)
	var ee *execx.Error
	if errors.As(err, &ee) {
		text += "\n" + ee.Stderr
	}
	_, after, ok := strings.Cut(text, "invalid option '")
	if !ok || len(after) < 2 || after[1] != '\'' {
		return ""
	}
	return after[:1]
}

func (c *ZpoolStatus) parse(parse func(io.Reader) ([]*zfs.Pool, error), source string, out []byte) (facts.StatusData, error) {
	pools, err := parse(bytes.NewReader(out))
	if err != nil {
		return facts.StatusData{}, &ParseError{Source: "zpool status (" + source + ")", Err: err}
	}
	c.logNewNotes(pools)
	c.urgeRisen(pools)
	return facts.StatusData{Source: source, Pools: pools}, nil
}

func (c *ZpoolStatus) zpool() string {
	if c.Zpool == "" {
		return "zpool"
	}
	return c.Zpool
}

func (c *ZpoolStatus) logNewNotes(pools []*zfs.Pool) {
	if c.Log == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seenNotes == nil {
		c.seenNotes = map[string]bool{}
	}
	for _, p := range pools {
		for _, n := range p.Notes {
			if !c.seenNotes[n] && len(c.seenNotes) < 1000 {
				c.seenNotes[n] = true
				c.Log.Info("zpool status printed a line zwatch does not know; it is kept as a note", "pool", p.Name, "line", n)
			}
		}
	}
}
