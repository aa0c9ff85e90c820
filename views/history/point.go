package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// pointVersion is the layout of a stored point; a reader skips layouts it
// does not know.
const pointVersion = 1

// maxPointBytes bounds a stored point a reader decodes: a pool with
// hundreds of vdevs, each with three counters, fits many times over.
const maxPointBytes = 256 << 10

// maxSeriesPerPoint bounds the series of one point.
const maxSeriesPerPoint = 4096

// Source builds a source name: "disk/<serial>" or "pool/<name>".
func Source(kind, name string) string { return kind + "/" + name }

// SplitSource splits "disk/SERIAL" or "pool/NAME" into kind and name.
func SplitSource(source string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(source, "/")
	if !ok || (kind != SourceDisk && kind != SourcePool) || name == "" {
		return "", "", fmt.Errorf("source %q: want disk/SERIAL or pool/NAME", source)
	}
	return kind, name, nil
}

// agg is one series over a period: min, max, mean and how many raw points.
type agg struct {
	Min, Max, Mean float64
	N              int
}

func (a agg) MarshalJSON() ([]byte, error) {
	return json.Marshal([4]float64{a.Min, a.Max, a.Mean, float64(a.N)})
}

func (a *agg) UnmarshalJSON(b []byte) error {
	var v [4]float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = agg{Min: v[0], Max: v[1], Mean: v[2], N: int(v[3])}
	if v[3] < 1 || v[3] != math.Trunc(v[3]) || v[3] > 1e9 {
		return fmt.Errorf("aggregate count %v: want a whole number >= 1", v[3])
	}
	return nil
}

// point is what one history message holds: a raw sample (Values) or an
// aggregate over Period seconds from T (Aggs). Host and Source are the real
// names; the subject holds them only as tokens.
type point struct {
	V      int                `json:"v"`
	Host   string             `json:"h"`
	Source string             `json:"src"`
	T      int64              `json:"t"`
	Period int32              `json:"p,omitempty"`
	Values map[string]float64 `json:"val,omitempty"`
	Aggs   map[string]agg     `json:"agg,omitempty"`
}

var errUnknownLayout = errors.New("history point of a layout this zwatch does not know")

func encodePoint(p point) ([]byte, error) {
	p.V = pointVersion
	if err := p.check(); err != nil {
		return nil, err
	}
	return json.Marshal(p)
}

// decodePoint reads a stored point and checks that it makes sense, so that
// a damaged or foreign message is skipped instead of plotted.
func decodePoint(b []byte) (point, error) {
	var p point
	if len(b) > maxPointBytes {
		return p, fmt.Errorf("history point of %d bytes: more than %d", len(b), maxPointBytes)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("decode history point: %w", err)
	}
	if p.V != pointVersion {
		return p, fmt.Errorf("%w (version %d)", errUnknownLayout, p.V)
	}
	return p, p.check()
}

func (p point) check() error {
	if _, _, err := SplitSource(p.Source); err != nil {
		return err
	}
	if p.Host == "" {
		return fmt.Errorf("history point of %s: no host", p.Source)
	}
	if p.T <= 0 || p.T > 1<<40 {
		return fmt.Errorf("history point of %s: time %d out of range", p.Source, p.T)
	}
	if len(p.Values)+len(p.Aggs) > maxSeriesPerPoint {
		return fmt.Errorf("history point of %s: %d series, more than %d", p.Source, len(p.Values)+len(p.Aggs), maxSeriesPerPoint)
	}
	switch p.Period {
	case 0:
		if len(p.Values) == 0 {
			return fmt.Errorf("history point of %s: a raw point without values", p.Source)
		}
		if len(p.Aggs) > 0 {
			return fmt.Errorf("history point of %s: a raw point with aggregates", p.Source)
		}
		for name, v := range p.Values {
			if name == "" || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("history point of %s: series %q value %v", p.Source, name, v)
			}
		}
	case 3600, 86400:
		if len(p.Aggs) == 0 {
			return fmt.Errorf("history point of %s: an aggregate without series", p.Source)
		}
		if len(p.Values) > 0 {
			return fmt.Errorf("history point of %s: an aggregate with raw values", p.Source)
		}
		if p.T%int64(p.Period) != 0 {
			return fmt.Errorf("history point of %s: period start %d not on a %ds boundary", p.Source, p.T, p.Period)
		}
		for name, a := range p.Aggs {
			if name == "" || !(a.Min <= a.Mean && a.Mean <= a.Max) || math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) {
				return fmt.Errorf("history point of %s: series %q aggregate min %v mean %v max %v", p.Source, name, a.Min, a.Mean, a.Max)
			}
		}
	default:
		return fmt.Errorf("history point of %s: period %ds, want 0, 3600 or 86400", p.Source, p.Period)
	}
	return nil
}
