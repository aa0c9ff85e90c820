package mosquittotest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Message is one message a Watcher received.
type Message struct {
	Topic    string
	Payload  string
	Retained bool
	QoS      byte
}

// JSON decodes the payload as an object.
func (m Message) JSON(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(m.Payload), &v); err != nil {
		t.Fatalf("%s: not a JSON object: %v\n%s", m.Topic, err, m.Payload)
	}
	return v
}

// Watcher is a real MQTT client subscribed to a topic filter, keeping
// every message in the order the broker sent them.
type Watcher struct {
	c       paho.Client
	mu      sync.Mutex
	msgs    []Message
	arrived chan struct{}
}

// Watch subscribes to filter (QoS 1) on the broker at url (tcp://host:port),
// logging in as user when set; it disconnects when the test ends.
func Watch(t *testing.T, addr, user, pass, filter string) *Watcher {
	t.Helper()
	w := &Watcher{arrived: make(chan struct{}, 1)}
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(fmt.Sprintf("watch-%d", time.Now().UnixNano())).
		SetProtocolVersion(4).SetCleanSession(true).SetAutoReconnect(false).SetConnectTimeout(5 * time.Second)
	if user != "" {
		o.SetUsername(user).SetPassword(pass)
	}
	w.c = paho.NewClient(o)
	if tok := w.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher connect to %s: %v", addr, tok.Error())
	}
	tok := w.c.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) {
		w.mu.Lock()
		w.msgs = append(w.msgs, Message{Topic: m.Topic(), Payload: string(m.Payload()), Retained: m.Retained(), QoS: m.Qos()})
		w.mu.Unlock()
		select {
		case w.arrived <- struct{}{}:
		default:
		}
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe %s: %v", filter, tok.Error())
	}
	t.Cleanup(func() { w.c.Disconnect(100) })
	return w
}

// Mark is where the messages received from now on begin.
func (w *Watcher) Mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.msgs)
}

// Wait returns the first message from mark on for which ok holds, failing
// the test after within.
func (w *Watcher) Wait(t *testing.T, mark int, within time.Duration, what string, ok func(Message) bool) Message {
	t.Helper()
	deadline := time.After(within)
	for {
		w.mu.Lock()
		for _, m := range w.msgs[mark:] {
			if ok(m) {
				w.mu.Unlock()
				return m
			}
		}
		w.mu.Unlock()
		select {
		case <-w.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no %s within %s; received:\n%s", what, within, w.dump(mark))
		}
	}
}

// On waits for a message on topic whose payload satisfies ok (nil: any).
func (w *Watcher) On(t *testing.T, mark int, topic string, ok func(string) bool) Message {
	t.Helper()
	return w.Wait(t, mark, 20*time.Second, "message on "+topic, func(m Message) bool {
		return m.Topic == topic && (ok == nil || ok(m.Payload))
	})
}

// Since is every message from mark on.
func (w *Watcher) Since(mark int) []Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Message(nil), w.msgs[mark:]...)
}

func (w *Watcher) dump(mark int) string {
	var b strings.Builder
	for _, m := range w.Since(mark) {
		p := m.Payload
		if len(p) > 200 {
			p = p[:200] + "…"
		}
		fmt.Fprintf(&b, "  %s retained=%v %q\n", m.Topic, m.Retained, p)
	}
	return b.String()
}

// Is is an On condition: the payload equals want.
func Is(want string) func(string) bool { return func(p string) bool { return p == want } }
