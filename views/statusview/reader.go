package statusview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/model/smart"
	"github.com/zwatch/zwatch/model/zfs"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/silence"
)

// ErrNoSuchHost: the bus holds nothing about the host asked for.
var ErrNoSuchHost = errors.New("no such host on the bus")

// RecentNotifications is how many of the newest notifications a view reads.
const RecentNotifications = 50

// maxDisksPerHost bounds the SMART subjects one host view reads.
const maxDisksPerHost = 512

// Reader reads views from the bus; it is safe for concurrent use.
type Reader struct {
	b           *bus.Bus
	host        string
	silentAfter time.Duration
	channels    []channelRef
	// current keeps the rule state between requests (rules.CurrentCache).
	current rules.CurrentCache
	// reads are the kinds of fact a host's view reads, and where each goes.
	reads *facts.Handlers[*lastFacts]
}

type channelRef struct{ name, typ string }

// New returns a reader of b for the config's host, channels and watcher rules.
func New(b *bus.Bus, cfg *config.Config) *Reader {
	r := &Reader{b: b, host: cfg.Host, silentAfter: rules.SilentAfter(&cfg.Rules), reads: lastFactsHandlers()}
	if cfg.Notify.Console {
		r.channels = append(r.channels, channelRef{notifiers.TypeConsole, notifiers.TypeConsole})
	}
	for _, c := range cfg.Notify.Channels {
		r.channels = append(r.channels, channelRef{c.Name, c.Type})
	}
	return r
}

// LocalHost is the host this zwatch runs as.
func (r *Reader) LocalHost() string { return r.host }

// Hosts lists every host on the bus, sorted by name.
func (r *Reader) Hosts(ctx context.Context) ([]HostSummary, error) {
	views, err := fleet.Fleet(ctx, r.b.JS)
	if err != nil {
		return nil, err
	}
	cur, err := r.current.Read(ctx, r.b)
	if err != nil {
		return nil, fmt.Errorf("active alerts: %w", err)
	}
	active := cur.Active()
	now := time.Now()
	out := make([]HostSummary, 0, len(views))
	for _, v := range views {
		s := HostSummary{Host: v.Host, LastHeartbeat: v.LastHeartbeat, Pools: len(v.Pools)}
		s.Silent = r.silent(v.LastHeartbeat, now)
		for _, p := range v.Pools {
			if p.State != zfs.StateOnline {
				s.PoolsNotOnline++
			}
		}
		for _, a := range hostAlerts(active, v.Host) {
			if a.Silenced != nil {
				s.Silenced++
			}
			s.Firing++
			if severityRank(a.Severity) > severityRank(alert.Severity(s.Worst)) {
				s.Worst = string(a.Severity)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Host reads one host's view.
func (r *Reader) Host(ctx context.Context, host string) (Host, error) {
	sh, err := r.shared(ctx)
	if err != nil {
		return Host{}, err
	}
	return r.hostView(ctx, host, sh)
}

// All reads every host's view, the alerts and the outbox read once.
func (r *Reader) All(ctx context.Context) ([]Host, error) {
	views, err := fleet.Fleet(ctx, r.b.JS)
	if err != nil {
		return nil, err
	}
	sh, err := r.shared(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Host, 0, len(views))
	for _, v := range views {
		h, err := r.hostView(ctx, v.Host, sh)
		if errors.Is(err, ErrNoSuchHost) {
			continue // only remembered by the rules, with nothing left in the stream
		}
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// Inventory reads every host's pools, disks and alerts: a view without the
// notifications, dead letters and outbox progress a page adds, for the
// channels that show each pool and disk (notifiers.InventoryFeed).
func (r *Reader) Inventory(ctx context.Context) ([]Host, error) {
	views, err := fleet.Fleet(ctx, r.b.JS)
	if err != nil {
		return nil, err
	}
	active, err := rules.Active(ctx, r.b)
	if err != nil {
		return nil, fmt.Errorf("active alerts: %w", err)
	}
	out := make([]Host, 0, len(views))
	for _, v := range views {
		h, err := r.hostView(ctx, v.Host, shared{active: active})
		if errors.Is(err, ErrNoSuchHost) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// shared is what every host's view takes from the same place.
type shared struct {
	active   []alert.Alert
	silences []silence.Silence
	now      time.Time
	recent   []Notification
	dead     []delivery.DeadLetter
	progress []ChannelProgress
}

func (r *Reader) shared(ctx context.Context) (shared, error) {
	var sh shared
	var err error
	cur, err := r.current.Read(ctx, r.b)
	if err != nil {
		return sh, fmt.Errorf("active alerts: %w", err)
	}
	sh.active, sh.silences, sh.now = cur.Active(), cur.Silences(false), cur.Now()
	if sh.dead, err = delivery.DeadLetters(ctx, r.b.JS); err != nil {
		return sh, fmt.Errorf("dead letters: %w", err)
	}
	if sh.progress, err = r.outbox(ctx, sh.dead); err != nil {
		return sh, err
	}
	notes, seqs, err := RecentFromOutbox(ctx, r.b.JS, RecentNotifications)
	if err != nil {
		return sh, fmt.Errorf("recent notifications: %w", err)
	}
	sh.recent = withDelivery(notes, seqs, sh.progress, sh.dead)
	return sh, nil
}

func (r *Reader) hostView(ctx context.Context, host string, sh shared) (Host, error) {
	token := bus.Token(host)
	last, err := r.lastFacts(ctx, token)
	if err != nil {
		return Host{}, err
	}
	alerts := hostAlerts(sh.active, host)
	if last.subjects == 0 && len(alerts) == 0 {
		return Host{}, fmt.Errorf("%w: %s (no facts, heartbeat or alerts about it)", ErrNoSuchHost, host)
	}
	h := Host{Host: host, GeneratedAt: time.Now().UTC(), Alerts: alerts, Recent: []Notification{}, DeadLetters: []delivery.DeadLetter{},
		Silences: hostSilences(sh, alerts)}
	if last.hostName != "" {
		h.Host = last.hostName
	}
	if last.heartbeat != nil {
		at := last.heartbeatAt
		h.LastHeartbeat, h.Version, h.Collectors = &at, last.heartbeat.Version, last.heartbeat.Collectors
	}
	h.Silent = r.silent(h.LastHeartbeat, time.Now())
	if last.arc != nil {
		at := last.arcAt
		h.ARC, h.ARCAt = last.arc, &at
	}
	h.Pools, h.Disks = buildPools(last, alerts), buildDisks(last, alerts)
	for _, n := range sh.recent {
		if n.Host == h.Host || bus.Token(n.Host) == token {
			h.Recent = append(h.Recent, n)
		}
	}
	for _, d := range sh.dead {
		if d.Notification.Host == h.Host || bus.Token(d.Notification.Host) == token {
			h.DeadLetters = append(h.DeadLetters, d)
		}
	}
	return h, nil
}

func (r *Reader) silent(last *time.Time, now time.Time) bool {
	return r.silentAfter > 0 && (last == nil || now.Sub(*last) > r.silentAfter)
}

// lastFacts is a host's newest message of each kind the views read.
type lastFacts struct {
	subjects    int
	hostName    string
	heartbeat   *facts.HeartbeatData
	heartbeatAt time.Time
	status      *facts.StatusData
	statusAt    time.Time
	capacity    *facts.CapacityData
	capacityAt  time.Time
	arc         *zfs.ARC
	arcAt       time.Time
	inventory   *facts.DisksData
	smart       []smartAt
}

type smartAt struct {
	r  smart.Report
	at time.Time
}

func (r *Reader) lastFacts(ctx context.Context, token string) (lastFacts, error) {
	var lf lastFacts
	var subjects []string
	for _, k := range r.reads.Kinds() {
		s, err := r.b.FactFilter(ctx, k.Filter(token))
		if err != nil {
			return lf, fmt.Errorf("facts of %s: %w", token, err)
		}
		subjects = append(subjects, s)
	}
	msgs, err := bus.LastMsgs(ctx, r.b.JS, bus.StreamFacts, subjects)
	if err != nil {
		return lf, fmt.Errorf("facts of %s: %w", token, err)
	}
	disks := 0
	for _, m := range msgs {
		read, _, known := r.reads.ForSubject(m.Subject)
		if known && read.Kind() == facts.Smart {
			if disks++; disks > maxDisksPerHost {
				continue
			}
		}
		var env bus.Envelope
		if json.Unmarshal(m.Data, &env) != nil {
			continue // a damaged message is the rules' to report, not the page's
		}
		lf.subjects++
		if env.Host != "" {
			lf.hostName = env.Host
		}
		// A payload the page cannot read leaves its part of the page
		// empty; the rules report it.
		_ = read.Handle(&lf, env)
	}
	return lf, nil
}

// lastFactsHandlers are the kinds of fact a host's view reads, SMART
// reports first, and where each goes.
func lastFactsHandlers() *facts.Handlers[*lastFacts] {
	var hs facts.Handlers[*lastFacts]
	facts.On(&hs, facts.Smart, func(lf *lastFacts, env bus.Envelope, r *smart.Report) error {
		lf.smart = append(lf.smart, smartAt{*r, env.CollectedAt})
		return nil
	})
	facts.On(&hs, facts.Heartbeat, func(lf *lastFacts, env bus.Envelope, hb *facts.HeartbeatData) error {
		lf.heartbeat, lf.heartbeatAt = hb, env.CollectedAt
		return nil
	})
	facts.On(&hs, facts.ZpoolStatus, func(lf *lastFacts, env bus.Envelope, d *facts.StatusData) error {
		lf.status, lf.statusAt = d, env.CollectedAt
		return nil
	})
	facts.On(&hs, facts.ZpoolCapacity, func(lf *lastFacts, env bus.Envelope, d *facts.CapacityData) error {
		lf.capacity, lf.capacityAt = d, env.CollectedAt
		return nil
	})
	facts.On(&hs, facts.ARC, func(lf *lastFacts, env bus.Envelope, d *zfs.ARC) error {
		lf.arc, lf.arcAt = d, env.CollectedAt
		return nil
	})
	facts.On(&hs, facts.Disks, func(lf *lastFacts, _ bus.Envelope, d *facts.DisksData) error {
		lf.inventory = d
		return nil
	})
	return &hs
}

// hostSilences are the silences in force, each with the number of the
// host's alerts it silences.
func hostSilences(sh shared, alerts []alert.Alert) []Silence {
	out := []Silence{}
	for _, s := range sh.silences {
		v := Silence{Silence: s, State: s.State(sh.now)}
		for _, a := range alerts {
			if a.Silenced != nil && a.Silenced.ID == s.ID {
				v.Silencing++
			}
		}
		out = append(out, v)
	}
	return out
}

// hostAlerts are the firing and pending alerts about host, worst first.
func hostAlerts(active []alert.Alert, host string) []alert.Alert {
	out := []alert.Alert{}
	token := bus.Token(host)
	for _, a := range active {
		if h := a.Labels["host"]; h == host || bus.Token(h) == token {
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return severityRank(out[i].Severity) > severityRank(out[j].Severity) })
	return out
}

func severityRank(s alert.Severity) int {
	switch s {
	case alert.Critical:
		return 3
	case alert.Warning:
		return 2
	case alert.Info:
		return 1
	}
	return 0
}
