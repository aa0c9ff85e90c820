package collectors

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
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

	mu         sync.Mutex
	noJSON     bool // zpool rejected -j: OpenZFS before 2.3
	noCounters bool // zpool rejected -p: ZoL 0.7, whose counters are approximate
	seenNotes  map[string]bool
}

// Name implements Collector.
func (c *ZpoolStatus) Name() string { return "zpool_status" }

// Collect implements Collector.
func (c *ZpoolStatus) Collect(ctx context.Context, pub Publisher) error {
	err := PublishRead(ctx, pub, facts.KindZpoolStatus, c.Name(), c.Read)
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
	counters := !c.noCounters
	c.mu.Unlock()
	res, err := c.Runner.Run(ctx, c.zpool(), c.textArgs(counters, pool)...)
	if err != nil && counters && execx.KindOf(err) == execx.KindFailed && rejectedOption(res, err) {
		// ZoL 0.7 has no -p for status: fall back to approximate counters.
		c.mu.Lock()
		c.noCounters = true
		c.mu.Unlock()
		res, err = c.Runner.Run(ctx, c.zpool(), c.textArgs(false, pool)...)
	}
	if err != nil {
		return facts.StatusData{}, err
	}
	return c.parse(zfs.ParseStatusText, "text", res.Stdout)
}

func (c *ZpoolStatus) jsonArgs(pool string) []string {
	args := []string{"status", "-j", "--json-int", "-p"}
	if !c.ShortNames {
		args = append(args, "-P")
	}
	return withPool(args, pool)
}

func (c *ZpoolStatus) textArgs(counters bool, pool string) []string {
	args := []string{"status"}
	if counters {
		args = append(args, "-p")
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

func (c *ZpoolStatus) parse(parse func(io.Reader) ([]*zfs.Pool, error), source string, out []byte) (facts.StatusData, error) {
	pools, err := parse(bytes.NewReader(out))
	if err != nil {
		return facts.StatusData{}, &ParseError{Source: "zpool status (" + source + ")", Err: err}
	}
	c.logNewNotes(pools)
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
