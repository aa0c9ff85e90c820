package bus

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestTokenSanitises(t *testing.T) {
	cases := map[string]string{
		"nas1":            "nas1",
		"nas.example.com": "nas_example_com",
		"WD-WX32D7088AF1": "WD-WX32D7088AF1",
		"S/N 12 34*>":     "S_N_12_34__",
		"":                "_",
		"  ":              "_",
		"ünï":             "_n_",
	}
	for in, want := range cases {
		if got := Token(in); got != want {
			t.Errorf("Token(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Subject("nas.home", "smart", "WD 1.2"); got != "zwatch.v1.nas_home.smart.WD_1_2" {
		t.Errorf("Subject = %q", got)
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	msg, err := Wrap("zpool.capacity", "nas1", "zpool_list", at, map[string]int{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	env, err := Decode(msg, "zpool.capacity", &got)
	if err != nil {
		t.Fatal(err)
	}
	if env.Schema != "zwatch.v1.zpool.capacity" || env.Host != "nas1" || env.Collector != "zpool_list" || !env.CollectedAt.Equal(at) || got["x"] != 1 {
		t.Fatalf("envelope = %+v data %v", env, got)
	}
	if _, err := Decode(msg, "zpool.status", nil); err == nil {
		t.Fatal("schema mismatch not detected")
	}
	if _, err := Decode([]byte("{"), "zpool.status", nil); err == nil {
		t.Fatal("broken JSON accepted")
	}
}

// TestEmbeddedJetStreamSurvivesRestart proves the single-machine bus: a real
// embedded NATS server with JetStream on a state dir keeps stored messages
// across a restart, and in-process publish/consume works.
func TestEmbeddedJetStreamSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Embedded() || b.ClientURL() != "" {
		t.Fatalf("want embedded with no listener, got embedded=%v url=%q", b.Embedded(), b.ClientURL())
	}
	subj := Subject("nas1", KindAlert)
	msg, _ := Wrap(KindAlert, "nas1", "rules", time.Now(), map[string]string{"id": "n1"})
	if err := b.Publish(ctx, subj, msg); err != nil {
		t.Fatal(err)
	}
	kv, err := b.JS.KeyValue(ctx, StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Stat(filepath.Join(dir, "jetstream")); err != nil {
		t.Fatalf("no JetStream store in state dir: %v", err)
	}

	b2, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	cons, err := b2.JS.CreateOrUpdateConsumer(ctx, StreamAlerts, jetstream.ConsumerConfig{Durable: "t", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("stored message lost across restart: %v", err)
	}
	var env Envelope
	if err := json.Unmarshal(m.Data(), &env); err != nil || env.Host != "nas1" {
		t.Fatalf("bad message after restart: %s", m.Data())
	}
	_ = m.Ack()
	kv2, _ := b2.JS.KeyValue(ctx, StateBucket)
	e, err := kv2.Get(ctx, "k")
	if err != nil || string(e.Value()) != "v" {
		t.Fatalf("KV lost across restart: %v", err)
	}
}

func TestStateDirNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere; use a path under a regular file instead.
		f := filepath.Join(t.TempDir(), "file")
		os.WriteFile(f, nil, 0o600)
		_, err := Open(context.Background(), Options{FactSubjects: testFactSubjects, StateDir: filepath.Join(f, "sub")}, nil)
		if err == nil {
			t.Fatal("want error")
		}
		t.Log(err)
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	_, err := Open(context.Background(), Options{FactSubjects: testFactSubjects, StateDir: dir}, nil)
	if err == nil {
		t.Fatal("want error for read-only state dir")
	}
}

// testFactSubjects stand in for facts.StreamSubjects, which this package's
// own tests cannot import.
var testFactSubjects = []string{"zwatch.v1.*.zpool.>", "zwatch.v1.*.smart.>", "zwatch.v1.*.heartbeat"}
