package replace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/zwatch/zwatch/internal/clock"
	"github.com/zwatch/zwatch/internal/units"
	"github.com/zwatch/zwatch/model/zfs"
)

// followAndReport follows the resilver of pool, then prints the outcome
// and the scrub to run next.
func (r *run) followAndReport(ctx context.Context, pool string) error {
	start := r.Now()
	p, err := r.follow(ctx, pool)
	if err != nil {
		fmt.Fprintf(r.Out, "\nThe resilver goes on without zwatch; watch it with: %s\n", ShellCommand("zpool", "status", "-v", pool))
		return err
	}
	fmt.Fprintf(r.Out, "\nResilver finished (followed for %s). Pool %s is %s.\n", r.Now().Sub(start).Round(time.Second), p.Name, p.State)
	if t := strings.TrimSpace(p.Scan.Text); t != "" {
		fmt.Fprintf(r.Out, "  scan: %s\n", strings.ReplaceAll(t, "\n", "\n        "))
	}
	if p.Scan.Errors > 0 {
		fmt.Fprintf(r.Out, "The resilver met %d errors: check `zpool status -v %s`.\n", p.Scan.Errors, ShellQuote(p.Name))
	}
	fmt.Fprintf(r.Out, "Next, verify every block with a scrub:\n\n    %s\n", ShellCommand("zpool", "scrub", p.Name))
	return nil
}

// staleLimit is how many polls in a row may show a finished resilver with
// a replacing vdev still present before Run stops following: ZFS keeps the
// old device attached when the resilver met errors.
const staleLimit = 5

// follow polls the pool until no resilver runs and no replacing vdev is
// left, drawing a progress bar from the scan's own percent, rate and ETA.
func (r *run) follow(ctx context.Context, pool string) (*zfs.Pool, error) {
	bar := progressbar.NewOptions64(10000,
		progressbar.OptionSetWriter(r.Out),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionSetDescription("resilver"),
		progressbar.OptionShowDescriptionAtLineEnd(),
	)
	seen, stale := false, 0
	for {
		pools, err := r.Status.Status(ctx, pool)
		if err != nil {
			return nil, fmt.Errorf("reading pool status: %w", err)
		}
		p, err := findPool(pools, pool)
		if err != nil {
			return nil, err
		}
		running := p.Scan.Function == zfs.ScanResilver && p.Scan.State == zfs.ScanStateScanning
		replacing := hasReplacing(p)
		if running {
			seen = true
			_ = bar.Set64(int64(p.Scan.PercentDone * 100))
			bar.Describe(scanDetail(p.Scan))
			if r.Progress != nil {
				r.Progress(p.Scan)
			}
		}
		switch {
		case !running && !replacing:
			bar.Describe("resilver complete")
			_ = bar.Finish()
			fmt.Fprintln(r.Out)
			return p, nil
		case !running && seen:
			if stale++; stale >= staleLimit {
				_ = bar.Exit()
				fmt.Fprintln(r.Out)
				return p, fmt.Errorf("%w in pool %s: the old device is still attached next to the new one (resilver errors: %d); see `zpool status -v %s`",
					ErrResilverStuck, p.Name, p.Scan.Errors, ShellQuote(p.Name))
			}
		default:
			stale = 0
		}
		if err := clock.Sleep(ctx, r.Poll); err != nil {
			_ = bar.Exit()
			return nil, err
		}
	}
}

// ScanDetail says how far a resilver is, with zpool's own rate and
// estimate.
func ScanDetail(s zfs.Scan) string { return scanDetail(s) }

// scanDetail is the bar's caption: zpool's own rate and estimate.
func scanDetail(s zfs.Scan) string {
	rate := "rate unknown"
	if s.RateBytes > 0 {
		rate = units.IEC(s.RateBytes) + "/s" // binary units, as zpool prints them
	}
	eta := "no estimate yet"
	if s.ETASeconds > 0 {
		eta = (time.Duration(s.ETASeconds) * time.Second).String() + " to go"
	}
	return fmt.Sprintf("%.2f%% resilvered, %s, %s", s.PercentDone, rate, eta)
}

// hasReplacing reports whether any vdev of p is a replacing group.
func hasReplacing(p *zfs.Pool) bool {
	for _, cv := range p.AllVdevs() {
		if hasType(cv.Vdev, zfs.VdevReplacing) {
			return true
		}
	}
	return false
}

func hasType(v *zfs.Vdev, typ string) bool {
	if v.Type == typ {
		return true
	}
	for _, c := range v.Children {
		if hasType(c, typ) {
			return true
		}
	}
	return false
}
