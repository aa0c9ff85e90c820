package bus

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zwatch/zwatch/fleet/clustertest"
)

const clusterConfs = "../configs/nats-cluster"

// The shipped cluster configs load with nats-server's own parser and say
// what docs/fleet.md says: JetStream, a three-node cluster with TLS routes,
// TLS for clients, and per-host agent permissions.
func TestNATSClusterConfigsLoad(t *testing.T) {
	cl := clustertest.Start(t, clusterConfs)
	names := map[string]bool{}
	for i := range 3 {
		o, err := cl.Options(i)
		if err != nil {
			t.Fatalf("node-%d.conf: %v", i+1, err)
		}
		names[o.ServerName] = true
		if !o.JetStream || o.Cluster.Name != "zwatch" || len(o.Routes) != 2 || o.TLSConfig == nil || o.Cluster.TLSConfig == nil || o.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
			t.Errorf("node-%d.conf: jetstream %v cluster %q routes %d tls %v route tls %v verify %v",
				i+1, o.JetStream, o.Cluster.Name, len(o.Routes), o.TLSConfig != nil, o.Cluster.TLSConfig != nil, o.Cluster.TLSConfig != nil && o.Cluster.TLSConfig.ClientAuth == tls.RequireAndVerifyClientCert)
		}
		if o.SystemAccount != "SYS" {
			t.Errorf("node-%d.conf: system account %q", i+1, o.SystemAccount)
		}
		var agent, srv bool
		for _, u := range o.Users {
			switch u.Username {
			case "nas1":
				agent = true
				p := u.Permissions
				if p == nil || p.Publish == nil || p.Subscribe == nil ||
					!slices.Equal(p.Publish.Allow, []string{"zwatch.v1.nas1.>"}) || !slices.Equal(p.Publish.Deny, []string{"zwatch.v1.nas1.alert", "zwatch.v1.nas1.history.>"}) ||
					!slices.Equal(p.Subscribe.Allow, []string{"_INBOX_nas1.>"}) {
					t.Errorf("nas1 permissions %+v", p)
				}
				if u.Account == nil || u.Account.Name != "ZWATCH" {
					t.Errorf("nas1 account %v", u.Account)
				}
			case clustertest.ServerUser:
				srv = true
				if u.Permissions != nil {
					t.Errorf("server user is restricted: %+v", u.Permissions)
				}
			}
		}
		if !agent || !srv {
			t.Errorf("node-%d.conf: agent user %v, server user %v", i+1, agent, srv)
		}
	}
	if len(names) != 3 {
		t.Errorf("server names %v", names)
	}
}

func openServer(ctx context.Context, t *testing.T, cl *clustertest.Cluster) *Bus {
	t.Helper()
	var b *Bus
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err = Open(ctx, Options{FactSubjects: testFactSubjects, URL: cl.URL(), User: clustertest.ServerUser, Password: clustertest.ServerPassword,
			TLSCA: cl.CA, Replicas: 3, Name: "test-server", Partitions: 64}, nil)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond) // JetStream meta leader election
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func openAgent(ctx context.Context, t *testing.T, cl *clustertest.Cluster, host string) (*Bus, func() []string) {
	t.Helper()
	b, err := Open(ctx, Options{URL: cl.URL(), User: host, Password: clustertest.AgentPassword(host), TLSCA: cl.CA,
		NoStreams: true, InboxPrefix: "_INBOX_" + host, Name: "agent@" + host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	var mu sync.Mutex
	var errs []string
	b.NC.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	})
	return b, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(errs)
	}
}

// An agent over TLS with its own user publishes its facts (acknowledged by
// the R3 stream) and nothing else: not another host's facts, not an alert,
// not the JetStream API, and it reads nothing.
func TestNATSClusterAgentPermissions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := clustertest.Start(t, clusterConfs)
	srv := openServer(ctx, t, cl)
	st, err := srv.JS.Stream(ctx, StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	if r := st.CachedInfo().Config.Replicas; r != 3 {
		t.Errorf("facts stream replicas %d", r)
	}

	agent, asyncErrs := openAgent(ctx, t, cl, "nas1")
	msg, _ := Wrap("heartbeat", "nas1", "zwatch", time.Now(), map[string]any{})
	if err := agent.Publish(ctx, Subject("nas1", "heartbeat"), msg); err != nil {
		t.Fatalf("own subject refused: %v", err)
	}
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 2*time.Second) }
	for _, subj := range []string{Subject("nas2", "heartbeat"), Subject("nas1", KindAlert), "$JS.API.STREAM.PURGE." + StreamFacts} {
		pctx, c := short()
		err := agent.Publish(pctx, subj, msg)
		c()
		if err == nil {
			t.Errorf("agent nas1 could publish on %s", subj)
		}
	}
	pctx, c := short()
	_, err = agent.JS.Stream(pctx, StreamFacts)
	c()
	if err == nil {
		t.Error("agent nas1 could use the JetStream API")
	}
	sub, err := agent.NC.SubscribeSync("zwatch.v1.nas2.>")
	if err == nil {
		_ = agent.NC.Flush()
		time.Sleep(200 * time.Millisecond)
		_ = sub.Unsubscribe()
	}
	var violations int
	for _, e := range asyncErrs() {
		if strings.Contains(strings.ToLower(e), "permissions violation") {
			violations++
		}
	}
	if violations < 4 {
		t.Errorf("want a permissions violation for each refused publish and the subscription, got %v", asyncErrs())
	}
	// Only nas1's own heartbeat reached the stream.
	info, err := st.Info(ctx, jetstream.WithSubjectFilter("zwatch.>"))
	if err != nil {
		t.Fatal(err)
	}
	// (stored under its partition: the servers' transform, not the agent,
	// adds it)
	if len(info.State.Subjects) != 1 || info.State.Subjects[StoredFilter(Subject("nas1", "heartbeat"), 64)] != 1 {
		t.Errorf("stream subjects %v", info.State.Subjects)
	}
	if _, err := srv.JS.Stream(ctx, StreamAlerts); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Fatal(err)
	}
}
