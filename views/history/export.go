package history

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
)

// Export formats.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// ExportOptions say what Export writes.
type ExportOptions struct {
	Host string
	// Sources to write; none: every source of the host.
	Sources  []string
	From, To time.Time
	Format   string
	// Events writes the host's events instead of the points.
	Events bool
}

// Export writes a host's points (one CSV row per point and series, or one
// JSON Result per source) or its events.
func (s *Store) Export(ctx context.Context, w io.Writer, o ExportOptions) error {
	if o.Format != FormatCSV && o.Format != FormatJSON {
		return fmt.Errorf("export format %q: want csv or json", o.Format)
	}
	if err := checkRange(o.From, o.To); err != nil {
		return err
	}
	if o.Events {
		events, err := s.Events(ctx, o.Host, o.From, o.To)
		if err != nil {
			return err
		}
		if o.Format == FormatJSON {
			return writeJSON(w, struct {
				Events []Event `json:"events"`
			}{events})
		}
		return writeEventsCSV(w, events)
	}
	sources := o.Sources
	if len(sources) == 0 {
		var err error
		if sources, err = s.Sources(ctx, o.Host); err != nil {
			return err
		}
		if len(sources) == 0 {
			return fmt.Errorf("host %q has no history: zwatch keeps it for the hosts it collects from (check --host against zwatch status --all-hosts)", o.Host)
		}
	}
	var cw *csv.Writer
	if o.Format == FormatCSV {
		cw = csv.NewWriter(w)
		if err := cw.Write([]string{"host", "source", "time", "period_s", "series", "min", "max", "mean"}); err != nil {
			return err
		}
	}
	results := make([]Result, 0, len(sources))
	for _, src := range sources {
		res, err := s.Query(ctx, o.Host, src, o.From, o.To)
		if errors.Is(err, ErrNoSuchSource) {
			return fmt.Errorf("%w; sources of %s: %s", err, o.Host, s.KnownSources(ctx, o.Host))
		}
		if err != nil {
			return err
		}
		if cw == nil {
			results = append(results, res)
			continue
		}
		if err := writeResultCSV(cw, res); err != nil {
			return err
		}
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return writeJSON(w, struct {
		Sources []Result `json:"sources"`
	}{results})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeResultCSV(cw *csv.Writer, r Result) error {
	names := make([]string, 0, len(r.Series))
	for name := range r.Series {
		names = append(names, name)
	}
	slices.Sort(names)
	num := func(v *float64) string { return strconv.FormatFloat(*v, 'g', -1, 64) }
	for i, t := range r.Times {
		at := time.Unix(t, 0).UTC().Format(time.RFC3339)
		period := strconv.Itoa(int(r.Periods[i]))
		for _, name := range names {
			c := r.Series[name]
			if c.Mean[i] == nil {
				continue
			}
			if err := cw.Write([]string{r.Host, r.Source, at, period, name, num(c.Min[i]), num(c.Max[i]), num(c.Mean[i])}); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeEventsCSV(w io.Writer, events []Event) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"host", "kind", "at", "pool", "state", "start", "examined_bytes", "repaired_bytes", "errors", "alert", "severity", "status", "fingerprint", "summary"})
	for _, e := range events {
		start := ""
		if e.Start != nil {
			start = e.Start.UTC().Format(time.RFC3339)
		}
		u := func(n uint64) string { return strconv.FormatUint(n, 10) }
		_ = cw.Write([]string{e.Host, e.Kind, e.At.UTC().Format(time.RFC3339), e.Pool, e.State, start,
			u(e.ExaminedBytes), u(e.RepairedBytes), u(e.Errors), e.Alert, e.Severity, e.Status, e.Fingerprint, e.Summary})
	}
	cw.Flush()
	return cw.Error()
}
