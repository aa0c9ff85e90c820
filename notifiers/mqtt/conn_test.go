package mqtt_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/mosquittotest"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/mqtt"
)

// proxy forwards TCP to the broker and can cut every connection without a
// word, as a crash or a pulled cable would.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	paused bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.paused {
				p.mu.Unlock()
				c.Close()
				continue
			}
			u, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				p.mu.Unlock()
				c.Close()
				continue
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut(true) })
	return p
}

func (p *proxy) url() string { return "mqtt://" + p.ln.Addr().String() }

// cut closes every connection; paused, it refuses new ones until resume.
func (p *proxy) cut(pause bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = pause
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

// TestLastWillMarksTheSensorsUnavailable: when the daemon's connection
// dies without a goodbye the broker publishes its last will (offline);
// once the broker can be reached again the sender reconnects by itself and
// says online. A broker restarted without persistence gets every entity
// again.
func TestLastWillMarksTheSensorsUnavailable(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	px := startProxy(t, br.Addr(br.Port))
	ch := build(t, mqtt.Config{Broker: px.url()})
	setInventory(t, ch, inventory())
	w := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "zwatch/nas1/availability")
	w.On(t, 0, "zwatch/nas1/availability", mosquittotest.Is("online"))

	mark := w.Mark()
	px.cut(true)
	if m := w.On(t, mark, "zwatch/nas1/availability", mosquittotest.Is("offline")); m.Retained {
		t.Error("the will arrived as retained on an existing subscription") // the broker clears the flag for live subscribers
	}
	late := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "zwatch/nas1/availability")
	if m := late.On(t, 0, "zwatch/nas1/availability", nil); m.Payload != "offline" || !m.Retained {
		t.Errorf("after the connection died the broker holds %q retained=%v, want offline retained", m.Payload, m.Retained)
	}
	mark = w.Mark()
	px.resume()
	w.On(t, mark, "zwatch/nas1/availability", mosquittotest.Is("online"))

	// The broker restarts and forgets everything retained.
	br.Restart(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		again := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "homeassistant/#")
		time.Sleep(300 * time.Millisecond)
		if len(again.Since(0)) >= 4 { // event + 2 pools + 1 disk
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the entities were not published again after the broker restarted:\n%s", br.Log())
		}
		time.Sleep(time.Second)
	}
	send(t, ch, notifytest.Firing("nas1", "after-restart"))
}

// TestOtherSendersLeaveTheDaemonAlone: `zwatch notify test` (a sender
// without inventory) publishes its event under a client id of its own,
// neither taking over the daemon's session nor touching availability or
// entities; the daemon's sender says offline when it closes, and sends
// after Close fail.
func TestOtherSendersLeaveTheDaemonAlone(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	w := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	daemon := build(t, mqtt.Config{Broker: br.URL()})
	setInventory(t, daemon, inventory())
	w.On(t, 0, "zwatch/nas1/availability", mosquittotest.Is("online"))
	// The daemon's own discovery may still be on its way: what it
	// announces before the mark is not the test's doing.
	for _, entity := range []string{"pool_vault", "pool_tank", "disk_" + inventoryDisk} {
		w.On(t, 0, "homeassistant/binary_sensor/zwatch_nas1/"+entity+"/config", nil)
	}

	mark := w.Mark()
	cfg := notifytest.NotifyConfig(mqttChannel("ha", mqtt.Config{Broker: br.URL()}))
	res := notifiers.Test(context.Background(), cfg, "ha", notifiers.SampleNotification("nas1"))
	if len(res) != 1 || !res[0].Delivered {
		t.Fatalf("notify test: %+v", res)
	}
	if e := w.On(t, mark, "zwatch/nas1/notification", nil).JSON(t); e["event_type"] != "test" {
		t.Errorf("test event %v", e)
	}
	send(t, daemon, notifytest.Firing("nas1", "n-1")) // the daemon's session is still up
	w.On(t, mark, "zwatch/nas1/pool/vault/state", mosquittotest.Is("ON"))
	for _, m := range w.Since(mark) {
		if m.Topic == "zwatch/nas1/availability" || strings.HasSuffix(m.Topic, "/config") && !strings.Contains(m.Topic, sampleDisk) {
			t.Errorf("notify test disturbed the daemon's entities: %s %q", m.Topic, m.Payload)
		}
	}

	mark = w.Mark()
	s := daemon.Sender.(*mqtt.Sender)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	w.On(t, mark, "zwatch/nas1/availability", mosquittotest.Is("offline"))
	err := daemon.Send(context.Background(), notifiers.Render(notifytest.Firing("nas1", "n-2")))
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("send after Close: %v", err)
	}
}

// TestRefusalsAreClearErrors: a wrong password, a missing login, nothing
// listening, TLS mistakes: each error says what went wrong without the
// password, and the hint says what to change.
func TestRefusalsAreClearErrors(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"zwatch": "right-pass"}, TLS: true})
	cases := []struct {
		name    string
		c       mqtt.Config
		err     string
		fix     string
		deliver bool
	}{
		{"right password", mqtt.Config{Broker: br.URL(), Username: "zwatch", Password: secret("right-pass")}, "", "", true},
		{"wrong password", mqtt.Config{Broker: br.URL(), Username: "zwatch", Password: secret("hunter2-wrong")},
			"not Authorized", "the broker refused the login: check username and password", false},
		{"no login", mqtt.Config{Broker: br.URL()}, "not Authorized", "the broker wants a login: set username and password", false},
		{"nothing listens", mqtt.Config{Broker: "mqtt://127.0.0.1:" + itoa(mosquittotest.FreePort(t))},
			"connection refused", "connection refused: nothing listens at broker (mqtt://127.0.0.1:", false},
		{"TLS with its CA", mqtt.Config{Broker: br.TLSURL(), CAFile: br.CAFile, Username: "zwatch", Password: secret("right-pass")}, "", "", true},
		{"TLS without its CA", mqtt.Config{Broker: br.TLSURL(), Username: "zwatch", Password: secret("right-pass")},
			"certificate signed by unknown authority", "ca_file for mqtt", false},
		{"TLS to the plain port", mqtt.Config{Broker: "mqtts://" + br.Addr(br.Port), Username: "zwatch", Password: secret("right-pass")},
			"connect to", "probably does not speak TLS: use mqtts:// with the broker's TLS port (usually 8883), or mqtt:// for its plain port", false},
		{"plain to the TLS port", mqtt.Config{Broker: "mqtt://" + br.Addr(br.TLSPort), Username: "zwatch", Password: secret("right-pass")},
			"connect to", "if port " + itoa(br.TLSPort) + " is its TLS port (usually 8883) write mqtts://", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := build(t, tc.c)
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			start := time.Now()
			err := ch.Send(ctx, notifiers.Render(notifytest.Firing("nas1", "n-1")))
			if tc.deliver {
				if err != nil {
					t.Fatalf("%v (fix: %s)", err, ch.Fix(err))
				}
				return
			}
			if err == nil {
				t.Fatal("delivered")
			}
			fix := ch.Fix(err)
			t.Logf("error: %v\nfix: %s (after %s)", err, fix, time.Since(start).Round(time.Millisecond))
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "right-pass") || strings.Contains(fix, "pass\"") {
				t.Errorf("the password is in the error: %v", err)
			}
			if !strings.Contains(err.Error(), tc.err) || !strings.Contains(fix, tc.fix) {
				t.Errorf("error %q\nfix %q\nwant %q and %q", err, fix, tc.err, tc.fix)
			}
			if time.Since(start) > 7*time.Second {
				t.Errorf("took %s: a refusal must not wait for the timeout", time.Since(start))
			}
		})
	}
}

// TestDeliveredThroughTheOutbox: the daemon's path. The outbox delivers
// to the real channel, the inventory feed reaches its sender, and when
// delivery.Run ends the sender says offline.
func TestDeliveredThroughTheOutbox(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	w := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	feed := notifiers.NewInventoryFeed()
	cfg := notifytest.NotifyConfig(mqttChannel("ha", mqtt.Config{Broker: br.URL()}))
	stop := notifytest.RunNotifiers(t, b, cfg, delivery.Options{Inventory: feed})
	feed.Set(inventory())
	w.On(t, 0, "zwatch/nas1/pool/tank/state", mosquittotest.Is("OFF"))
	if !feed.Wanted() {
		t.Error("the feed does not know a channel reads it")
	}
	notifytest.Publish(t, b, notifytest.Firing("nas1", "outbox-1"))
	if e := w.On(t, 0, "zwatch/nas1/notification", nil).JSON(t); e["id"] != "outbox-1" {
		t.Errorf("event %v", e)
	}
	w.On(t, 0, "zwatch/nas1/pool/vault/state", mosquittotest.Is("ON"))
	mark := w.Mark()
	stop()
	w.On(t, mark, "zwatch/nas1/availability", mosquittotest.Is("offline"))
}

// TestEventPayloadLimits: a huge text is cut so the event stays under
// Home Assistant's 16 KiB of attributes, as valid JSON.
func TestEventPayloadLimits(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	w := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "zwatch/#")
	ch := build(t, mqtt.Config{Broker: br.URL()})
	m := notifiers.Render(notifytest.Firing("nas1", "big"))
	m.Text = strings.Repeat("\"quoted\" line\n", 5000)
	m.Summary = strings.Repeat("s", 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := w.On(t, 0, "zwatch/nas1/notification", nil)
	e := got.JSON(t)
	text, _ := e["text"].(string)
	summary, _ := e["summary"].(string)
	if len(got.Payload) > 16384 || len(text) < 8000 || !strings.HasSuffix(text, "…") || len([]rune(summary)) != 255 {
		t.Errorf("payload %d bytes, text %d bytes, summary %d runes", len(got.Payload), len(text), len([]rune(summary)))
	}
}

func secret(v string) config.Secret { return config.Secret{Value: v} }

func itoa(n int) string { return strconv.Itoa(n) }
