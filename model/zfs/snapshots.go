package zfs

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// SnapshotColumns are the columns SummarizeSnapshots reads, as given to
// `zfs list -Hp -t snapshot -o`.
var SnapshotColumns = []string{"name", "creation", "used"}

// gapWindow is how many of a series' newest snapshots the period estimate
// looks at: the largest of their gaps is the period, so one late or early
// run does not make a daily task look hourly.
const gapWindow = 4

// SummarizeSnapshots streams `zfs list -Hp -t snapshot -o
// name,creation,used -s creation`: per dataset the count, the sum of used,
// the newest snapshot and the recognised Scheme (the shortest period of a
// snapshot tool seen there). No line is kept: the state is per dataset
// and per tool schedule, so 50,000 snapshots cost a few KB. The input
// need not be sorted. stats are in dataset name order; total counts every
// snapshot read. On a bad line it returns what it read so far with an
// error naming the line.
func SummarizeSnapshots(r io.Reader) (stats []SnapshotStats, total int, err error) {
	lr := newLineReader(r)
	acc := map[string]*datasetSnaps{}
	for n := 1; ; n++ {
		b, ok := lr.nextBytes()
		if !ok {
			break
		}
		// A view of the reader's buffer, not a copy: this runs once per
		// snapshot, and what is kept of a line is copied (datasetSnaps.add).
		line := unsafe.String(unsafe.SliceData(b), len(b))
		if strings.TrimSpace(line) == "" {
			continue
		}
		s, err := parseSnapshotLine(line)
		if err != nil {
			return summarize(acc), total, fmt.Errorf("zfs: zfs list -t snapshot line %d: %w", n, err)
		}
		d := acc[s.dataset]
		if d == nil {
			name := strings.Clone(s.dataset) // not a slice of the line
			d = &datasetSnaps{stats: SnapshotStats{Dataset: name}}
			acc[name] = d
		}
		d.add(s)
		total++
	}
	if err := lr.readErr(); err != nil {
		return summarize(acc), total, fmt.Errorf("zfs: reading zfs list -t snapshot: %w", err)
	}
	return summarize(acc), total, nil
}

// snapshotLine is one parsed line; its strings point into the line.
type snapshotLine struct {
	dataset, name string
	created       time.Time
	used          uint64
}

func parseSnapshotLine(line string) (snapshotLine, error) {
	fields, n := splitThree(line)
	if n != len(SnapshotColumns) {
		return snapshotLine{}, fieldCountError(line, n, SnapshotColumns)
	}
	full := fields[0]
	at := strings.IndexByte(full, '@')
	if at <= 0 || at == len(full)-1 {
		if strings.IndexByte(full, '#') > 0 {
			return snapshotLine{}, fmt.Errorf("%q is a bookmark, not a snapshot: list with -t snapshot only", clipLine(full))
		}
		return snapshotLine{}, fmt.Errorf("%q is not a snapshot name (dataset@snapshot): is this zfs list -t snapshot output?", clipLine(full))
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(fields[1]), 10, 64)
	if err != nil || sec < 0 || sec > math.MaxInt32*4 {
		return snapshotLine{}, fmt.Errorf("creation %q of %s is not seconds since 1970: run zfs list with -p", clipLine(fields[1]), clipLine(full))
	}
	used, err := sizeOrNone(strings.TrimSpace(fields[2]))
	if err != nil {
		return snapshotLine{}, fmt.Errorf("used of %s: %w", clipLine(full), err)
	}
	return snapshotLine{
		dataset: full[:at],
		name:    full[at+1:],
		created: time.Unix(sec, 0).UTC(),
		used:    used,
	}, nil
}

// splitThree is splitListFields for the three columns without the slice it
// allocates: this runs once per snapshot. n is the number of fields.
func splitThree(line string) (f [3]string, n int) {
	if !strings.Contains(line, "\t") {
		fs := strings.Fields(line)
		copy(f[:], fs)
		return f, len(fs)
	}
	n = strings.Count(line, "\t") + 1
	if n == 3 {
		f[0], line, _ = strings.Cut(line, "\t")
		f[1], f[2], _ = strings.Cut(line, "\t")
	}
	return f, n
}

// datasetSnaps accumulates one dataset.
type datasetSnaps struct {
	stats SnapshotStats
	// series are the tool schedules seen here (sanoid hourly, truenas…):
	// a handful per dataset, whatever the number of snapshots.
	series []*snapSeries
	// newestName is stats.NewestName while streaming, a buffer reused as
	// each newer snapshot comes (in a listing sorted by creation, each one).
	newestName []byte
	// toolNewest is the newest snapshot of each tool, whatever its label.
	toolNewest map[string]*stamp
}

// stamp is a snapshot's creation and name, the name in a reused buffer.
type stamp struct {
	at   time.Time
	name []byte
}

// snapSeries is one tool and label on one dataset.
type snapSeries struct {
	tool, label string
	period      time.Duration // from the label; 0: read from the gaps
	// newest holds the creation times of the series' gapWindow newest
	// snapshots, oldest first.
	newest [gapWindow]time.Time
	n      int
}

func (d *datasetSnaps) add(s snapshotLine) {
	st := &d.stats
	st.Count++
	st.UsedBytes = saturatingAdd(st.UsedBytes, s.used)
	// s.name is a view of the reader's buffer: what is kept is copied into
	// buffers of this dataset's own, reused; summarize makes the strings.
	if st.Count == 1 || !s.created.Before(st.Newest) {
		st.Newest = s.created
		d.newestName = append(d.newestName[:0], s.name...)
	}
	tool, label, period, ok := RecognizeSnapshot(s.name)
	if !ok || !scheduled(tool, label) {
		return
	}
	if d.toolNewest == nil {
		d.toolNewest = map[string]*stamp{}
	}
	cur := d.toolNewest[tool]
	if cur == nil {
		cur = &stamp{}
		d.toolNewest[strings.Clone(tool)] = cur
	}
	if cur.name == nil || !s.created.Before(cur.at) {
		cur.at, cur.name = s.created, append(cur.name[:0], s.name...)
	}
	d.seriesFor(tool, label, period).add(s.created)
}

func (d *datasetSnaps) seriesFor(tool, label string, period time.Duration) *snapSeries {
	for _, sr := range d.series {
		if sr.tool == tool && sr.label == label {
			return sr
		}
	}
	sr := &snapSeries{tool: tool, label: strings.Clone(label), period: period}
	d.series = append(d.series, sr)
	return sr
}

// add keeps t if it is among the gapWindow newest times, in order, so that
// unsorted input gives the same result as sorted.
func (sr *snapSeries) add(t time.Time) {
	if sr.n < gapWindow {
		i := sr.n
		for i > 0 && sr.newest[i-1].After(t) {
			sr.newest[i] = sr.newest[i-1]
			i--
		}
		sr.newest[i] = t
		sr.n++
		return
	}
	if !t.After(sr.newest[0]) {
		return // older than all kept
	}
	i := 0
	for i+1 < gapWindow && sr.newest[i+1].Before(t) {
		sr.newest[i] = sr.newest[i+1]
		i++
	}
	sr.newest[i] = t
}

// estimatedPeriod is the period of the series: its label's, or the largest
// gap between its newest snapshots (at least 15 minutes for a "frequent"
// label); 0 when it cannot be told (one snapshot, or all at the same
// second).
func (sr *snapSeries) estimatedPeriod() time.Duration {
	if sr.period > 0 && !frequentLabel(sr.label) {
		return sr.period
	}
	var largest time.Duration
	for i := 1; i < sr.n; i++ {
		largest = max(largest, sr.newest[i].Sub(sr.newest[i-1]))
	}
	return max(largest, sr.period)
}

// scheme picks the shortest period seen on the dataset.
func (d *datasetSnaps) scheme() *SnapshotScheme {
	var best *SnapshotScheme
	for _, sr := range d.series {
		p := sr.estimatedPeriod()
		if p <= 0 {
			continue
		}
		if best == nil || p < best.Period {
			best = &SnapshotScheme{Tool: sr.tool, Label: sr.label, Period: p}
			if nw := d.toolNewest[sr.tool]; nw != nil {
				best.Newest, best.NewestName = nw.at, string(nw.name)
			}
		}
	}
	return best
}

func summarize(acc map[string]*datasetSnaps) []SnapshotStats {
	out := make([]SnapshotStats, 0, len(acc))
	for _, d := range acc {
		st := d.stats
		st.NewestName = string(d.newestName)
		st.Scheme = d.scheme()
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dataset < out[j].Dataset })
	return out
}

func saturatingAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
