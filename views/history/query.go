package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/bus"
)

// MaxRange is the longest range Query and Events answer.
const MaxRange = 3660 * 24 * time.Hour

// maxSources bounds the sources Sources lists for one host.
const maxSources = 10000

// ErrNoSuchSource says a source has no point stored (errors.Is).
var ErrNoSuchSource = errors.New("no history for this source")

func checkRange(from, to time.Time) error {
	switch {
	case from.IsZero() || to.IsZero():
		return errors.New("history range: give both from and to")
	case to.Before(from):
		return fmt.Errorf("history range: to %s is before from %s", to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	case to.Sub(from) > MaxRange:
		return fmt.Errorf("history range %s to %s: longer than %dd, the most kept", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), MaxRange/(24*time.Hour))
	}
	return nil
}

// Query is one source's points from..to: daily aggregates up to where the
// hourly ones begin, hourly ones up to where the raw points begin, then
// the raw points. It reads at most each tier's per-source count.
func (s *Store) Query(ctx context.Context, host, source string, from, to time.Time) (Result, error) {
	res := Result{Host: host, Source: source, From: from.UTC(), To: to.UTC(), Times: []int64{}, Periods: []int32{}, Series: map[string]Column{}}
	if err := checkRange(from, to); err != nil {
		return res, err
	}
	// The oldest point of each tier sets where the next finer one takes
	// over; then only the tiers the range needs are read, from a day
	// before the range by the store's clock (a host's clock may be off).
	oldest := map[string]*point{}
	for _, tier := range []string{TierRaw, TierHour} {
		p, err := s.firstPoint(ctx, host, source, tier)
		if err != nil {
			return res, err
		}
		oldest[tier] = p
	}
	rawCut, hourCut := cuts(oldest[TierRaw], oldest[TierHour])
	// A finer tier also fills what the coarser one before its cut lacks
	// (a young store has hours but no day yet), so it is read from its
	// oldest point.
	need := map[string]bool{
		TierRaw:  oldest[TierRaw] != nil && to.Unix() >= oldest[TierRaw].T,
		TierHour: oldest[TierHour] != nil && from.Unix() < rawCut && to.Unix() >= oldest[TierHour].T,
		TierDay:  from.Unix() < hourCut,
	}
	tiers := map[string][]point{}
	found := oldest[TierRaw] != nil || oldest[TierHour] != nil
	for _, tier := range []string{TierRaw, TierHour, TierDay} {
		if !need[tier] {
			continue
		}
		// Never after a day ago: facts of a clock running ahead (a
		// simulation) are stored now with times still to come.
		start := from.Add(-time.Duration(tierPeriod[tier])*time.Second - 24*time.Hour)
		start = minTime(start, time.Now().Add(-24*time.Hour))
		pts, err := s.tierPoints(ctx, host, source, tier, start)
		if err != nil {
			return res, err
		}
		tiers[tier] = pts
		found = found || len(pts) > 0
	}
	if !found {
		p, err := s.firstPoint(ctx, host, source, TierDay)
		if err != nil {
			return res, err
		}
		if p == nil {
			return res, fmt.Errorf("%w: %s on host %s (see zwatch history export --host %s for the sources kept)", ErrNoSuchSource, source, host, host)
		}
	}
	for _, p := range stitch(tiers, rawCut, hourCut) {
		end := p.T + int64(p.Period)
		if end < from.Unix() || p.T > to.Unix() || (p.Period > 0 && end == from.Unix()) {
			continue
		}
		res.add(p)
	}
	return res, nil
}

const noCut = int64(1) << 62

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// cuts are where raw points take over from hourly aggregates and hourly
// from daily: raw from the first whole hour they cover, hourly from the
// first whole day. When the raw points reach further back than the hourly
// ones (facts replayed faster than the clock), days give way to raw
// points at the raw points' first whole day.
func cuts(oldestRaw, oldestHour *point) (rawCut, hourCut int64) {
	rawCut, hourCut = noCut, noCut
	if oldestRaw != nil {
		rawCut = periodStart(oldestRaw.T+3599, 3600)
	}
	if oldestHour != nil {
		hourCut = periodStart(oldestHour.T+86399, 86400)
	} else {
		hourCut = rawCut
	}
	if oldestRaw != nil && (oldestHour == nil || oldestHour.T > oldestRaw.T) {
		rawCut = periodStart(oldestRaw.T+86399, 86400)
		hourCut = rawCut
	}
	return rawCut, hourCut
}

// stitch picks the points of each tier on its side of the cuts, so that
// none overlaps another, then fills what the coarser tiers lack before a
// cut with the finer points there: in a store younger than a day, the
// hours before the first daily aggregate; the minutes before the first
// hourly one.
func stitch(tiers map[string][]point, rawCut, hourCut int64) []point {
	var out []point
	for _, p := range tiers[TierDay] {
		if hourCut == noCut || p.T+86400 <= min(hourCut, rawCut) {
			out = append(out, p)
		}
	}
	days := len(out)
	for _, p := range tiers[TierHour] {
		if p.T+3600 <= rawCut && (p.T >= hourCut || !covered(out[:days], p.T)) {
			out = append(out, p)
		}
	}
	coarse := len(out)
	for _, p := range tiers[TierRaw] {
		if p.T >= rawCut || !covered(out[:coarse], p.T) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T < out[j].T })
	return out
}

// covered: an aggregate of pts holds time t.
func covered(pts []point, t int64) bool {
	for _, q := range pts {
		if q.T <= t && t < q.T+int64(q.Period) {
			return true
		}
	}
	return false
}

// firstPoint is the oldest point of a source in a tier, nil when none.
func (s *Store) firstPoint(ctx context.Context, host, source, tier string) (*point, error) {
	subject, err := pointSubject(host, tier, source)
	if err != nil {
		return nil, err
	}
	st, err := s.js.Stream(ctx, tierStream[tier])
	if err != nil {
		return nil, fmt.Errorf("history stream %s: %w", tierStream[tier], err)
	}
	m, err := st.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subject))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history stream %s, first of %s: %w", tierStream[tier], subject, err)
	}
	p, err := decodePoint(m.Data)
	if err != nil || p.Host != host || p.Source != source {
		// Another source of the same subject token: read the tier whole.
		pts, err := s.tierPoints(ctx, host, source, tier, time.Time{})
		if err != nil || len(pts) == 0 {
			return nil, err
		}
		return &pts[0], nil
	}
	return &p, nil
}

// tierPoints are a source's points of one tier, oldest first, stored
// from start (storage time; zero: all).
func (s *Store) tierPoints(ctx context.Context, host, source, tier string, start time.Time) ([]point, error) {
	subject, err := pointSubject(host, tier, source)
	if err != nil {
		return nil, err
	}
	var pts []point
	err = readMsgs(ctx, s.js, tierStream[tier], []string{subject}, start, int(perSubject(s.cfg, tier))+rawSlack, func(m jetstream.Msg) error {
		if p, err := decodePoint(m.Data()); err == nil && p.Host == host && p.Source == source && p.Period == tierPeriod[tier] {
			pts = append(pts, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errReadLimit) {
		return nil, err
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	return pts, nil
}

// add appends one point to the result's columns.
func (r *Result) add(p point) {
	i := len(r.Times)
	r.Times = append(r.Times, p.T)
	r.Periods = append(r.Periods, p.Period)
	set := func(name string, mn, mx, mean float64) {
		c, ok := r.Series[name]
		if !ok {
			c = Column{Min: make([]*float64, i), Max: make([]*float64, i), Mean: make([]*float64, i)}
		}
		c.Min, c.Max, c.Mean = append(c.Min, &mn), append(c.Max, &mx), append(c.Mean, &mean)
		r.Series[name] = c
	}
	for name, v := range p.Values {
		set(name, v, v, v)
	}
	for name, a := range p.Aggs {
		set(name, a.Min, a.Max, a.Mean)
	}
	for name, c := range r.Series {
		if len(c.Mean) == i {
			c.Min, c.Max, c.Mean = append(c.Min, nil), append(c.Max, nil), append(c.Mean, nil)
			r.Series[name] = c
		}
	}
}

// Sources are the sources with points stored for host, sorted.
func (s *Store) Sources(ctx context.Context, host string) ([]string, error) {
	seen := map[string]bool{}
	for _, tier := range []string{TierRaw, TierHour, TierDay} {
		st, err := s.js.Stream(ctx, tierStream[tier])
		if err != nil {
			return nil, fmt.Errorf("history stream %s: %w", tierStream[tier], err)
		}
		filter := bus.Subject(host, kindHistory+"."+tier) + ".>"
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			return nil, fmt.Errorf("history stream %s: %w", tierStream[tier], err)
		}
		subjects := make([]string, 0, len(info.State.Subjects))
		for subj := range info.State.Subjects {
			subjects = append(subjects, subj)
		}
		slices.Sort(subjects)
		for _, subj := range subjects {
			if len(seen) >= maxSources {
				break
			}
			m, err := lastMsg(ctx, s.js, tierStream[tier], subj)
			if err != nil || m == nil {
				continue
			}
			if p, err := decodePoint(m.Data); err == nil && p.Host == host {
				seen[p.Source] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for src := range seen {
		out = append(out, src)
	}
	slices.Sort(out)
	return out, nil
}

// KnownSources says which sources host has, for an error about another.
func (s *Store) KnownSources(ctx context.Context, host string) string {
	src, err := s.Sources(ctx, host)
	if err != nil || len(src) == 0 {
		return "none"
	}
	if len(src) > 20 {
		return strings.Join(src[:20], ", ") + fmt.Sprintf(" and %d more", len(src)-20)
	}
	return strings.Join(src, ", ")
}
