package history

// period accumulates the raw points of one source in one hour or day.
type period struct {
	start  int64 // Unix seconds; 0 before the first point
	series map[string]*running
}

// running is one series' min, max and sum so far.
type running struct {
	min, max, sum float64
	n             int
}

func (p *period) add(values map[string]float64) {
	if p.series == nil {
		p.series = make(map[string]*running, len(values))
	}
	for name, v := range values {
		r := p.series[name]
		if r == nil {
			p.series[name] = &running{min: v, max: v, sum: v, n: 1}
			continue
		}
		r.min, r.max, r.sum = min(r.min, v), max(r.max, v), r.sum+v
		r.n++
	}
}

func (p *period) empty() bool { return len(p.series) == 0 }

// aggs are the period's aggregates; the mean is kept within min and max,
// which float rounding of the sum could otherwise leave by an ulp.
func (p *period) aggs() map[string]agg {
	out := make(map[string]agg, len(p.series))
	for name, r := range p.series {
		mean := min(max(r.sum/float64(r.n), r.min), r.max)
		out[name] = agg{Min: r.min, Max: r.max, Mean: mean, N: r.n}
	}
	return out
}

func (p *period) reset(start int64) {
	p.start = start
	clear(p.series)
}

// periodStart is the start of the period of length secs holding t (UTC).
func periodStart(t, secs int64) int64 { return t - ((t%secs)+secs)%secs }
