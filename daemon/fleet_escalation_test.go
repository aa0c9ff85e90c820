package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/facts"
	"github.com/zwatch/zwatch/fleet"
	"github.com/zwatch/zwatch/fleet/clustertest"
	"github.com/zwatch/zwatch/incident"
	"github.com/zwatch/zwatch/internal/catalog"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/rules"
	"github.com/zwatch/zwatch/rules/pipeline"
	"github.com/zwatch/zwatch/views/statusview"
)

// The timings of TestFleetAckAndEscalationAcrossServers: below what a
// config file may set (repeats and escalation steps of at least a minute),
// so that the test takes seconds; set on the parsed config, as
// rules.SetSilentAfter does for the other fleet tests.
const (
	// Wide enough apart that `make test` on two busy cores (the servers'
	// hand-overs, the acknowledgement) fits between them: at 4/6/3/12 s a
	// loaded run acknowledged 19 s after the critical page, past step 2.
	escRepeatWarning  = 10 * time.Second
	escRepeatCritical = 15 * time.Second
	escStep1          = 3 * time.Second
	escStep2          = 40 * time.Second
	// escPartitions: nas1 is in partition 0 and nas2 in 1
	// (bus.PartitionOf), and a server above its share hands over its
	// highest partitions, so which server runs nas2's rules is known at
	// every step of the test.
	escPartitions = 2
)

// escPhones are the three webhook channels of the escalation test: phone
// gets the pages, partner notify.escalation's first step, loud its second.
type escPhones struct {
	phone, partner, loud *testutil.Phone[notifiers.WebhookPayload]
}

// escServer is `zwatch run --role server` on the test cluster with the
// escalation test's config. It returns the parsed config (with the short
// timings set), which is what `zwatch ack` on that server reads.
func escServer(t *testing.T, cl *clustertest.Cluster, name, stateDir string, ph escPhones) (*fleetServer, *config.Config) {
	t.Helper()
	text := fmt.Sprintf(`
host: %s
role: server
state_dir: %s
bus:
  url: %q
  user: %s
  password: %s
  tls:
    ca: %s
  replicas: 3
http:
  listen: ""
rules:
  group_wait: 0s
  disabled: [ScrubNever, MonitoringBlindSpot]
fleet:
  lease_ttl: 3s
  partitions: %d
notify:
  console: false
  channels:
    - {name: phone, type: webhook, url: %q, min_severity: info}
    - {name: partner, type: webhook, url: %q, min_severity: info}
    - {name: loud, type: webhook, url: %q, min_severity: info}
  escalation:
    - {after: 1m, channels: [partner]}
    - {after: 2m, channels: [loud]}
`, name, stateDir, cl.URL(), clustertest.ServerUser, clustertest.ServerPassword, cl.CA, escPartitions,
		ph.phone.URL, ph.partner.URL, ph.loud.URL)
	l, err := config.Parse(strings.NewReader(text), catalog.Config())
	if err != nil {
		t.Fatal(err)
	}
	c := &l.Config
	c.Rules.RepeatWarning, c.Rules.RepeatCritical = config.Duration(escRepeatWarning), config.Duration(escRepeatCritical)
	c.Notify.Escalation[0].After, c.Notify.Escalation[1].After = config.Duration(escStep1), config.Duration(escStep2)
	logs := &syncBuf{}
	s := runFleetServer(t, c, logs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, logs.String())
		}
	})
	return s, c
}

// runFleetServer runs daemon.Run on cfg until the server is stopped or the
// test ends, logging into logs.
func runFleetServer(t *testing.T, cfg *config.Config, logs *syncBuf) *fleetServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &fleetServer{cancel: cancel, done: make(chan error, 1)}
	var w io.Writer = logs
	if os.Getenv("ZWATCH_FLEET_LOG") != "" {
		w = io.MultiWriter(logs, os.Stderr)
	}
	log := slog.New(slog.NewTextHandler(w, nil)).With("server", cfg.Host)
	go func() { s.done <- Run(ctx, cfg, Options{}, log) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// cliBus is the bus as `zwatch ack` or `zwatch alerts` on the server of
// cfg opens it (cmd/zwatch openBusFor, with bus.url).
func cliBus(t *testing.T, ctx context.Context, cfg *config.Config) *bus.Bus {
	t.Helper()
	o := BusOptions(cfg)
	o.Name, o.Partitions = "zwatch-cli@"+cfg.Host, 0
	var b *bus.Bus
	if err := bus.RetryAPI(ctx, func(ctx context.Context) (err error) {
		b, err = bus.Open(ctx, o, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestFleetAckAndEscalationAcrossServers: two zwatch servers share one
// three-node NATS cluster (the shipped configs) and its rule engine by
// partition, as docs/fleet.md says: nas2's facts are judged by whichever
// server holds its partition's lease, and its state (alerts, their
// acknowledgement, the escalation's progress) lives in the state bucket
// both read. Two agents report the same raidz2 with one disk pulled; nas1
// is never answered (it shows the repeat interval at work).
//
//  1. nas2's page is acknowledged through srv-a, which does not run nas2's
//     rules: srv-b's views (rules.Active and the status view) show it
//     acknowledged, and no repeat goes out at the repeat interval while
//     nas1's does.
//  2. A second disk of nas2's pool fails: it pages again, critical. It is
//     escalated once to step 1 (not once per server); srv-b, which runs
//     nas2's rules, is stopped and started again meanwhile, so nas2's
//     partition moves to srv-a and back: neither escalates step 1 again
//     (the state srv-b saved when it stopped says step 1 was reached), and
//     the repeat comes once, at its interval.
//  3. Acknowledged through srv-b, the chain stops: srv-b is stopped again
//     and srv-a carries on past step 2's time and the next repeat; then
//     srv-b comes back. Nothing more is sent about nas2's incident, and
//     both servers' views keep the acknowledgement.
func TestFleetAckAndEscalationAcrossServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node NATS cluster")
	}
	start := time.Now()
	logf := func(format string, args ...any) {
		t.Logf("%v: "+format, append([]any{time.Since(start).Round(time.Millisecond)}, args...)...)
	}
	if p1, p2 := bus.PartitionOf("nas1", escPartitions), bus.PartitionOf("nas2", escPartitions); p1 != 0 || p2 != 1 {
		t.Fatalf("nas1 in partition %d and nas2 in %d: the test expects 0 and 1", p1, p2)
	}
	cl := clustertest.Start(t, "../configs/nats-cluster")
	ph := escPhones{testutil.NewPhone[notifiers.WebhookPayload](t), testutil.NewPhone[notifiers.WebhookPayload](t),
		testutil.NewPhone[notifiers.WebhookPayload](t)}
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	admin := openAdmin(t, ctx, cl)
	logf("streams ready")

	dirA, dirB := t.TempDir(), t.TempDir()
	_, cfgA := escServer(t, cl, "srv-a", dirA, ph)
	waitOwner(t, ctx, admin, 1, "srv-a")
	srvB, cfgB := escServer(t, cl, "srv-b", dirB, ph)
	waitOwner(t, ctx, admin, 1, "srv-b")
	waitOwner(t, ctx, admin, 0, "srv-a")
	logf("srv-a runs partition 0 (nas1), srv-b partition 1 (nas2)")
	cliA, cliB := cliBus(t, ctx, cfgA), cliBus(t, ctx, cfgB)
	viewA, viewB := statusview.New(cliA, cfgA), statusview.New(cliB, cfgB)

	startFleetAgent(t, clusterAgent(cl, "nas1"), "nas1", "c1-removed")
	nas2 := startFleetAgent(t, clusterAgent(cl, "nas2"), "nas2", "c1-removed")

	// 1. The acknowledgement through srv-a, seen by srv-b.
	first1 := ph.phone.Wait(t, "nas1's page", vaultPage("nas1", ""))
	first2 := ph.phone.Wait(t, "nas2's page", vaultPage("nas2", ""))
	inc1, inc2 := vaultIncident(t, first1), vaultIncident(t, first2)
	if first2.Severity != string(alert.Warning) {
		t.Fatalf("nas2's first page is %s, want a warning: %s", first2.Severity, first2.Summary)
	}
	logf("nas2's incident %s paged: %s", inc2, first2.Summary)
	ackIncident(t, ctx, cliA, inc2, "alice")
	waitAcked(t, ctx, "srv-b", cliB, viewB, "nas2", inc2, "alice", alert.Warning)
	logf("srv-b shows %s acknowledged by alice through srv-a", inc2)
	rep1 := ph.phone.Wait(t, "nas1's repeat", func(p notifiers.WebhookPayload) bool {
		return vaultPage("nas1", inc1)(p) && p.ID != first1.ID
	})
	if d := rep1.Notification.Created.Sub(first1.Notification.Created); d < escRepeatWarning-500*time.Millisecond {
		t.Errorf("nas1 repeated %v after its page, before repeat_warning (%v)", d, escRepeatWarning)
	}
	sleepUntil(first2.Notification.Created.Add(escRepeatWarning + 2*time.Second))
	if ids := pageIDs(ph.phone, vaultPage("nas2", inc2)); len(ids) != 1 {
		t.Fatalf("nas2's acknowledged incident sent %d times by %v, want once: %v", len(ids), time.Since(first2.Notification.Created), ids)
	}
	logf("nas1 repeated after %v; nas2's acknowledged page did not", rep1.Notification.Created.Sub(first1.Notification.Created).Round(time.Millisecond))

	// 2. A second disk fails: a critical page, and the escalation's first
	// step, once, across srv-b's restart.
	setStep(t, nas2.step, "c4-missing")
	crit := ph.phone.Wait(t, "nas2's critical page", func(p notifiers.WebhookPayload) bool {
		return vaultPage("nas2", inc2)(p) && p.Severity == string(alert.Critical)
	})
	tc := crit.Notification.Created
	logf("the second disk paged again, critical: %s", crit.Summary)
	up1 := ph.partner.Wait(t, "escalation step 1", func(p notifiers.WebhookPayload) bool {
		return p.Host == "nas2" && p.Notification.Escalation == 1
	})
	if d := up1.Notification.Created.Sub(tc); d < escStep1 || d > escStep1+10*time.Second { // its exact time: rules/escalation_test.go, on a fake clock
		t.Errorf("step 1 escalated %v after the critical page, want %v", d, escStep1)
	}
	if !strings.Contains(up1.Summary+up1.Text, "ESCALATED") || incidentOf(up1.Notification) != inc2 {
		t.Errorf("step 1 page: %s: %+v", up1.Summary, up1.Notification.Alerts)
	}
	logf("step 1 escalated after %v", up1.Notification.Created.Sub(tc).Round(time.Millisecond))
	srvB.stop(t)
	checkEscalated(t, ctx, admin, "nas2", inc2, 1)
	waitOwner(t, ctx, admin, 1, "srv-a")
	logf("srv-b stopped, its state saved with step 1 reached; srv-a runs nas2's partition")
	srvB, _ = escServer(t, cl, "srv-b", dirB, ph)
	waitOwner(t, ctx, admin, 1, "srv-b")
	logf("srv-b back; nas2's partition is srv-b's again")
	rep2 := ph.phone.Wait(t, "nas2's critical repeat", func(p notifiers.WebhookPayload) bool {
		return vaultPage("nas2", inc2)(p) && p.ID != crit.ID && p.Severity == string(alert.Critical)
	})
	if d := rep2.Notification.Created.Sub(tc); d < escRepeatCritical-500*time.Millisecond {
		t.Errorf("nas2's critical page repeated after %v, before repeat_critical (%v)", d, escRepeatCritical)
	}
	logf("nas2's critical page repeated after %v", rep2.Notification.Created.Sub(tc).Round(time.Millisecond))

	// 3. Acknowledged through srv-b: the chain stops, on both servers and
	// across srv-b's restart.
	ackIncident(t, ctx, cliB, inc2, "bob")
	waitAcked(t, ctx, "srv-a", cliA, viewA, "nas2", inc2, "bob", alert.Critical)
	acked := time.Now()
	if late := tc.Add(escStep2 - time.Second); acked.After(late) {
		t.Fatalf("acknowledged %v after the critical page, too close to step 2 (%v) to tell whether it stopped the chain", acked.Sub(tc), escStep2)
	}
	logf("srv-a shows %s acknowledged by bob through srv-b, %v after the critical page", inc2, acked.Sub(tc).Round(time.Millisecond))
	srvB.stop(t)
	waitOwner(t, ctx, admin, 1, "srv-a")
	logf("srv-b stopped again; srv-a runs nas2's partition")
	sleepUntil(laterOf(tc.Add(escStep2), rep2.Notification.Created.Add(escRepeatCritical)).Add(2 * time.Second))
	escServer(t, cl, "srv-b", dirB, ph)
	waitOwner(t, ctx, admin, 1, "srv-b")
	time.Sleep(2 * time.Second) // srv-b's engine ticks on the state it loaded
	logf("srv-b back; nas2's partition is srv-b's again")
	waitAcked(t, ctx, "srv-a", cliA, viewA, "nas2", inc2, "bob", alert.Critical)
	waitAcked(t, ctx, "srv-b", cliB, viewB, "nas2", inc2, "bob", alert.Critical)
	checkEscalated(t, ctx, admin, "nas2", inc2, 1)

	// What each channel got about nas2's incident, each notification
	// counted once whatever the outbox's at-most-one repeat delivered.
	pages := pageIDs(ph.phone, vaultPage("nas2", inc2))
	if want := []string{first2.ID, crit.ID, rep2.ID}; !slices.Equal(pages, want) {
		t.Errorf("nas2's incident paged %v, want the warning, the critical page and one repeat %v:\n%s",
			pages, want, describePages(ph.phone, vaultPage("nas2", inc2)))
	}
	if up := pageIDs(ph.partner, isEscalation(1)); len(up) != 1 {
		t.Errorf("step 1 escalated %d times, want once:\n%s", len(up), describePages(ph.partner, isEscalation(1)))
	}
	for _, p := range ph.partner.Received() {
		if p.Notification.Escalation == 0 && p.Notification.Created.After(acked) {
			t.Errorf("partner got %s after the acknowledgement: %s", p.ID, p.Summary)
		}
	}
	if n := len(ph.loud.Received()); n != 0 {
		t.Errorf("the acknowledged incident reached step 2: %d notifications:\n%s", n, describePages(ph.loud, func(notifiers.WebhookPayload) bool { return true }))
	}
	// nas1, never answered, repeated at its interval and never twice at once.
	var prev time.Time
	for _, id := range pageIDs(ph.phone, vaultPage("nas1", inc1)) {
		at := createdOf(ph.phone, id)
		if !prev.IsZero() && at.Sub(prev) < escRepeatWarning-500*time.Millisecond {
			t.Errorf("nas1 repeated %v after the page before:\n%s", at.Sub(prev), describePages(ph.phone, vaultPage("nas1", inc1)))
		}
		prev = at
	}
	// A send cut off by srv-b's stop is handed back and delivered by srv-a
	// (the outbox's at-most-one repeat); never more than that.
	if dups, most := duplicates(ph.phone, ph.partner); len(dups) > 0 {
		isDup := func(p notifiers.WebhookPayload) bool { return slices.Contains(dups, p.ID) }
		what := describePages(ph.phone, isDup) + describePages(ph.partner, isDup)
		if most > 2 {
			t.Errorf("a notification delivered %d times:\n%s", most, what)
		} else {
			t.Logf("delivered twice (the outbox's at-most-one repeat):\n%s", what)
		}
	}
	logf("done")
}

// openAdmin makes the facts stream, partitioned, before any server starts:
// JetStream elects its meta leader first, and a request sent before that
// gets no answer.
func openAdmin(t *testing.T, ctx context.Context, cl *clustertest.Cluster) *bus.Bus {
	t.Helper()
	for {
		octx, c := context.WithTimeout(ctx, 5*time.Second)
		b, err := bus.Open(octx, bus.Options{FactSubjects: facts.StreamSubjects(), URL: cl.URL(), User: clustertest.ServerUser,
			Password: clustertest.ServerPassword, TLSCA: cl.CA, Replicas: 3, Partitions: escPartitions, Name: "test-admin"}, nil)
		c()
		if err == nil {
			t.Cleanup(b.Close)
			return b
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitOwner waits until server holds partition p's lease.
func waitOwner(t *testing.T, ctx context.Context, admin *bus.Bus, p int, server string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// Each look on its own timeout: a request the cluster drops while it
		// elects a leader is never answered.
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		st, err := fleet.Status(sctx, admin.JS)
		cancel()
		if err != nil {
			last = err.Error()
			continue
		}
		for _, row := range st.Table {
			if row.Partition == p {
				last = row.Owner
				if strings.HasPrefix(row.Owner, server+"/") {
					return
				}
			}
		}
	}
	t.Fatalf("partition %d not taken by %s: held by %q", p, server, last)
}

// checkEscalated checks the saved state of host in the state bucket, which
// the engine that takes its partition over loads: every critical alert of
// incident id has reached escalation step want. (The page of a step made
// again would carry the same ID, which the outbox's duplicate window drops
// for two minutes: only the state says the step is remembered for longer.)
func checkEscalated(t *testing.T, ctx context.Context, admin *bus.Bus, host, id string, want int) {
	t.Helper()
	var saved []byte
	if err := bus.RetryAPI(ctx, func(ctx context.Context) error {
		kv, err := admin.JS.KeyValue(ctx, bus.StateBucket)
		if err != nil {
			return err
		}
		e, err := kv.Get(ctx, "rules.host."+bus.Token(host))
		if err != nil {
			return err
		}
		saved = e.Value()
		return nil
	}); err != nil {
		t.Fatalf("%s's saved state: %v", host, err)
	}
	data, err := rules.StateJSON(saved)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Alerts map[string]pipeline.Tracked `json:"alerts"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range st.Alerts {
		if a.A.Incident != id || a.A.State != alert.Firing || a.A.Severity != alert.Critical {
			continue
		}
		n++
		if a.Escalated != want || a.CriticalAt == nil {
			t.Errorf("%s's saved %s (incident %s): escalated %d, critical since %v; want step %d", host, a.A.Name, id, a.Escalated, a.CriticalAt, want)
		}
	}
	if n == 0 {
		t.Errorf("%s's saved state has no critical alert of incident %s", host, id)
	}
}

// ackIncident acknowledges incident id as `zwatch ack` does, through b.
func ackIncident(t *testing.T, ctx context.Context, b *bus.Bus, id, by string) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := incident.Answer(actx, b, facts.IncidentActionData{Incident: id, Action: facts.ActionAck, By: by, Source: "cli"}, 0)
	if err != nil || res.Host != "nas2" {
		t.Fatalf("ack %s by %s: host %q, %v", id, by, res.Host, err)
	}
}

// waitAcked waits until server's views, rules.Active through b and the
// status view's host page, both show every firing alert of incident id
// acknowledged by by, up to severity.
func waitAcked(t *testing.T, ctx context.Context, server string, b *bus.Bus, view *statusview.Reader, host, id, by string, severity alert.Severity) {
	t.Helper()
	ok := func(as []alert.Alert) (bool, string) {
		n := 0
		for _, a := range as {
			if a.Incident != id || a.State != alert.Firing {
				continue
			}
			if a.Ack == nil || a.Ack.By != by || a.Ack.Source != "cli" || !a.Ack.Covers(&a) || a.Ack.Severity != severity && a.Severity == severity {
				return false, fmt.Sprintf("%s %s ack %+v", a.Name, a.Severity, a.Ack)
			}
			n++
		}
		return n > 0, fmt.Sprintf("%d alerts of %s", n, id)
	}
	var why string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		active, err := rules.Active(sctx, b)
		cancel()
		if err != nil {
			why = err.Error()
			continue
		}
		var good bool
		if good, why = ok(active); !good {
			continue
		}
		sctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		h, err := view.Host(sctx, host)
		cancel()
		if err != nil {
			why = "status view: " + err.Error()
			continue
		}
		if good, why = ok(h.Alerts); good {
			return
		}
		why = "status view: " + why
	}
	t.Fatalf("%s does not show incident %s acknowledged by %s up to %s: %s", server, id, by, severity, why)
}

// vaultPage matches a firing notification of host's pool vault (of
// incident id, when not empty) that is not an escalation.
func vaultPage(host, id string) func(notifiers.WebhookPayload) bool {
	return func(p notifiers.WebhookPayload) bool {
		if p.Host != host || p.Status != "firing" || p.Notification.Escalation != 0 {
			return false
		}
		inc := incidentOf(p.Notification)
		return inc != "" && (id == "" || inc == id)
	}
}

func isEscalation(step int) func(notifiers.WebhookPayload) bool {
	return func(p notifiers.WebhookPayload) bool { return p.Notification.Escalation == step }
}

// incidentOf is the incident of n's alerts of pool vault.
func incidentOf(n alert.Notification) string {
	for _, a := range n.Alerts {
		if a.Labels["pool"] == "vault" {
			return a.Incident
		}
	}
	return ""
}

func vaultIncident(t *testing.T, p notifiers.WebhookPayload) string {
	t.Helper()
	id := incidentOf(p.Notification)
	if id == "" {
		t.Fatalf("%s's page names no incident of vault: %+v", p.Host, p.Notification.Alerts)
	}
	return id
}

// pageIDs are the IDs of the notifications ph got that match, in the order
// they were made, each once.
func pageIDs(ph *testutil.Phone[notifiers.WebhookPayload], match func(notifiers.WebhookPayload) bool) []string {
	seen := map[string]time.Time{}
	var ids []string
	for _, p := range ph.Received() {
		if !match(p) {
			continue
		}
		if _, ok := seen[p.ID]; !ok {
			ids = append(ids, p.ID)
		}
		seen[p.ID] = p.Notification.Created
	}
	slices.SortStableFunc(ids, func(a, b string) int { return seen[a].Compare(seen[b]) })
	return ids
}

func createdOf(ph *testutil.Phone[notifiers.WebhookPayload], id string) time.Time {
	for _, p := range ph.Received() {
		if p.ID == id {
			return p.Notification.Created
		}
	}
	return time.Time{}
}

// describePages lists what ph got that matches, for a failure message.
func describePages(ph *testutil.Phone[notifiers.WebhookPayload], match func(notifiers.WebhookPayload) bool) string {
	var b strings.Builder
	for _, p := range ph.Received() {
		if match(p) {
			fmt.Fprintf(&b, "  %s %s %s %s escalation %d escalated %d: %s\n", p.Notification.Created.Format("15:04:05.000"),
				p.ID, p.Status, p.Severity, p.Notification.Escalation, p.Notification.Escalated, p.Summary)
		}
	}
	return b.String()
}

// duplicates are the notification IDs a phone got more than once, and the
// most times one phone got one.
func duplicates(phones ...*testutil.Phone[notifiers.WebhookPayload]) (ids []string, most int) {
	for _, ph := range phones {
		n := map[string]int{}
		for _, p := range ph.Received() {
			if n[p.ID]++; n[p.ID] == 2 {
				ids = append(ids, p.ID)
			}
			most = max(most, n[p.ID])
		}
	}
	return ids, most
}

func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
