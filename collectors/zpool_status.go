package collectors

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"sync"

	"github.com/zwatch/zwatch/execx"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/zfs"
)

// ZpoolStatus publishes the full pool state from `zpool status`: JSON on
// OpenZFS ≥ 2.3, text everywhere else. The format is chosen once, on the
// first run, from `zpool version`.
type ZpoolStatus struct {
	Runner *execx.Runner
	Zpool  string
	// Log hears, once each, about lines the parser kept as notes because it
	// did not recognise them (a newer OpenZFS may print new sections).
	Log *slog.Logger

	once      sync.Once
	argv      []string
	json      bool
	seenNotes map[string]bool
}

// Name implements Collector.
func (c *ZpoolStatus) Name() string { return "zpool_status" }

var versionRE = regexp.MustCompile(`zfs-(?:kmod-)?(\d+)\.(\d+)`)

// jsonSupported reads `zpool version` (absent before 0.8) and reports
// whether `zpool status -j` exists (2.3 and later).
func jsonSupported(out []byte) bool {
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	return major > 2 || major == 2 && minor >= 3
}

func (c *ZpoolStatus) detect(ctx context.Context) {
	c.argv = []string{"status", "-p", "-P", "-v"}
	if res, err := c.Runner.Run(ctx, c.Zpool, "version"); err == nil && jsonSupported(res.Stdout) {
		c.argv, c.json = []string{"status", "-j", "--json-int", "-p", "-P"}, true
	}
}

// Collect implements Collector.
func (c *ZpoolStatus) Collect(ctx context.Context, pub Publisher) error {
	c.once.Do(func() { c.detect(ctx) })
	res, err := c.Runner.Run(ctx, c.Zpool, c.argv...)
	if err != nil && !c.json && execx.KindOf(err) == execx.KindFailed && bytes.Contains(res.Stderr, []byte("invalid option")) {
		// ZoL 0.7 has no -p for status: fall back to approximate counters.
		c.argv = []string{"status", "-P", "-v"}
		res, err = c.Runner.Run(ctx, c.Zpool, c.argv...)
	}
	if err != nil {
		return err
	}
	var pools []*zfs.Pool
	source := "text"
	if c.json {
		source = "json"
		pools, err = zfs.ParseStatusJSON(bytes.NewReader(res.Stdout))
	} else {
		pools, err = zfs.ParseStatusText(bytes.NewReader(res.Stdout))
	}
	if err != nil {
		return &ParseError{Source: "zpool status (" + source + ")", Err: err}
	}
	c.logNewNotes(pools)
	return pub.Publish(ctx, facts.KindZpoolStatus, c.Name(), facts.StatusData{Source: source, Pools: pools})
}

func (c *ZpoolStatus) logNewNotes(pools []*zfs.Pool) {
	if c.Log == nil {
		return
	}
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
