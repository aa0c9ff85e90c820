package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/views/history"
	"github.com/zwatch/zwatch/views/statusview"
)

// Bounds of the query parameters.
const (
	maxParamLen   = 256
	defaultRange  = 30 * 24 * time.Hour
	maxRange      = 3650 * 24 * time.Hour
	maxEventKinds = 8
)

// requestError is a bad request or unknown thing, with the status to answer.
type requestError struct {
	code int
	msg  string
}

func (e *requestError) Error() string { return e.msg }

func badParam(name, format string, a ...any) error {
	return &requestError{http.StatusBadRequest, "parameter " + name + ": " + fmt.Sprintf(format, a...)}
}

// fail answers err: its own status for a requestError, 404 for an unknown
// host, 504 for a bus too slow, else 500.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var re *requestError
	switch {
	case errors.As(err, &re):
		writeError(w, r, re.code, re.msg)
	case errors.Is(err, statusview.ErrNoSuchHost), errors.Is(err, history.ErrNoSuchSource):
		writeError(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("status page: reading the bus took too long", "path", r.URL.Path, "err", err)
		writeError(w, r, http.StatusGatewayTimeout, "reading the bus took longer than "+viewTimeout.String()+": is the daemon's bus overloaded?")
	default:
		s.log.Warn("status page: request failed", "path", r.URL.Path, "err", err)
		writeError(w, r, http.StatusInternalServerError, err.Error())
	}
}

// param reads one query parameter, bounded.
func param(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if len(v) > maxParamLen {
		return "", badParam(name, "longer than %d bytes", maxParamLen)
	}
	return v, nil
}

// pickHost is the host a request asks for (?host=), or this machine's, or
// the first on the bus; with the host list for the picker.
func (s *server) pickHost(ctx context.Context, r *http.Request) (string, []statusview.HostSummary, error) {
	want, err := param(r, "host")
	if err != nil {
		return "", nil, err
	}
	hosts, err := s.o.View.Hosts(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("read the hosts from the bus: %w", err)
	}
	if want != "" {
		for _, h := range hosts {
			if h.Host == want {
				return want, hosts, nil
			}
		}
		return "", hosts, &requestError{http.StatusNotFound, fmt.Sprintf("no host %q on the bus (known: %s)", want, hostNames(hosts))}
	}
	local := s.o.View.LocalHost()
	for _, h := range hosts {
		if h.Host == local {
			return local, hosts, nil
		}
	}
	if len(hosts) > 0 {
		return hosts[0].Host, hosts, nil
	}
	return "", hosts, nil
}

func hostNames(hosts []statusview.HostSummary) string {
	if len(hosts) == 0 {
		return "none yet"
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Host
	}
	return strings.Join(names, ", ")
}

// readHost is the chosen host's view; notFound when no host has reported.
func (s *server) readHost(ctx context.Context, r *http.Request) (statusview.Host, []statusview.HostSummary, error) {
	name, hosts, err := s.pickHost(ctx, r)
	if err != nil {
		return statusview.Host{}, hosts, err
	}
	if name == "" {
		return statusview.Host{}, hosts, &requestError{http.StatusNotFound, "no host has reported on the bus yet: is the daemon's collection running?"}
	}
	h, err := s.o.View.Host(ctx, name)
	if err != nil {
		return h, hosts, fmt.Errorf("read host %s from the bus: %w", name, err)
	}
	return h, hosts, nil
}

func (s *server) apiHosts(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	hosts, err := s.o.View.Hosts(ctx)
	if err != nil {
		s.fail(w, r, fmt.Errorf("read the hosts from the bus: %w", err))
		return
	}
	if hosts == nil {
		hosts = []statusview.HostSummary{}
	}
	writeJSON(w, http.StatusOK, hosts)
}

func (s *server) apiHost(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	h, _, err := s.readHost(ctx, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (s *server) historyOff(w http.ResponseWriter, r *http.Request) bool {
	if s.o.History != nil {
		return false
	}
	writeError(w, r, http.StatusNotFound, "history is off: set history.enabled: true in the config to keep and plot it")
	return true
}

func (s *server) apiHistory(w http.ResponseWriter, r *http.Request) {
	if s.historyOff(w, r) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	host, source, err := s.hostAndSource(ctx, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from, to, err := timeRange(r, time.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.o.History.Query(ctx, host, source, from, to)
	if err != nil {
		s.fail(w, r, fmt.Errorf("history of %s on %s: %w", source, host, err))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *server) apiEvents(w http.ResponseWriter, r *http.Request) {
	if s.historyOff(w, r) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	host, _, err := s.pickHost(ctx, r)
	if err == nil && host == "" {
		err = &requestError{http.StatusNotFound, "no host has reported on the bus yet"}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from, to, err := timeRange(r, time.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	kinds, err := eventKinds(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	events, err := s.o.History.Events(ctx, host, from, to, kinds...)
	if err != nil {
		s.fail(w, r, fmt.Errorf("events of %s: %w", host, err))
		return
	}
	if events == nil {
		events = []history.Event{}
	}
	writeJSON(w, http.StatusOK, events)
}

// hostAndSource reads ?host= and ?source=disk/SERIAL or pool/NAME.
func (s *server) hostAndSource(ctx context.Context, r *http.Request) (string, string, error) {
	source, err := param(r, "source")
	if err != nil {
		return "", "", err
	}
	kind, name, ok := strings.Cut(source, "/")
	if !ok || name == "" || (kind != history.SourceDisk && kind != history.SourcePool) {
		return "", "", badParam("source", "%q: want disk/SERIAL or pool/NAME", source)
	}
	host, _, err := s.pickHost(ctx, r)
	if err == nil && host == "" {
		err = &requestError{http.StatusNotFound, "no host has reported on the bus yet"}
	}
	return host, source, err
}

// timeRange reads ?range=30d (ending now) or ?from= and ?to= (RFC 3339; to
// defaults to now, from to 30 days before to).
func timeRange(r *http.Request, now time.Time) (time.Time, time.Time, error) {
	rng, err := param(r, "range")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	fromS, err := param(r, "from")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	toS, err := param(r, "to")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	if rng != "" && (fromS != "" || toS != "") {
		return time.Time{}, time.Time{}, badParam("range", "give either range or from/to, not both")
	}
	to := now
	if toS != "" {
		if to, err = time.Parse(time.RFC3339, toS); err != nil {
			return time.Time{}, time.Time{}, badParam("to", "%q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", toS)
		}
	}
	span := defaultRange
	if rng != "" {
		if span, err = config.ParseDuration(rng); err != nil || span <= 0 {
			return time.Time{}, time.Time{}, badParam("range", "%q is not a positive duration such as 12h, 7d or 400d", rng)
		}
	}
	from := to.Add(-span)
	if fromS != "" {
		if from, err = time.Parse(time.RFC3339, fromS); err != nil {
			return time.Time{}, time.Time{}, badParam("from", "%q is not an RFC 3339 time such as 2026-01-02T15:04:05Z", fromS)
		}
	}
	if !from.Before(to) {
		return time.Time{}, time.Time{}, badParam("from", "%s is not before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > maxRange {
		return time.Time{}, time.Time{}, badParam("range", "longer than %s: history keeps at most that", config.FormatDuration(maxRange))
	}
	return from, to, nil
}

// eventKinds reads ?kind=scrub,alert (empty: every kind).
func eventKinds(r *http.Request) ([]string, error) {
	v, err := param(r, "kind")
	if err != nil || v == "" {
		return nil, err
	}
	kinds := strings.Split(v, ",")
	if len(kinds) > maxEventKinds {
		return nil, badParam("kind", "at most %d kinds", maxEventKinds)
	}
	for _, k := range kinds {
		switch k {
		case history.EventScrub, history.EventResilver, history.EventAlert, history.EventAction:
		default:
			return nil, badParam("kind", "%q: want scrub, resilver, alert or action (comma separated)", k)
		}
	}
	return kinds, nil
}

func asRequestError(err error, target **requestError) bool { return errors.As(err, target) }

// apiFleet is how fleet servers share the rule engine (fleet.Status);
// 404 on one machine.
func (s *server) apiFleet(w http.ResponseWriter, r *http.Request) {
	if s.o.Engine == nil {
		writeError(w, r, http.StatusNotFound, "no fleet servers: this zwatch runs the one rule engine of its embedded bus")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	st, err := s.o.Engine(ctx)
	if err != nil {
		s.fail(w, r, fmt.Errorf("read the rule engine's partitions from the bus: %w", err))
		return
	}
	writeJSON(w, http.StatusOK, st)
}
