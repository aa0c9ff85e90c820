package mqtt

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// Sender publishes notifications to one broker. The daemon's channel
// worker also hands it the inventory (channel.InventoryReceiver): from then
// on it holds the availability topic (online, with offline as its last
// will) and keeps Home Assistant's entities and their states on the broker.
// A sender without an inventory (`zwatch notify test`, direct delivery)
// publishes only the notification events, under a client id of its own, so
// it neither takes over the daemon's session nor changes what it shows.
type Sender struct {
	broker   broker
	tls      *tls.Config
	username string
	password string
	clientID string // as configured; "" for zwatch-<host>
	topics   topics
	qos      byte
	timeout  time.Duration

	// turn is held by the one operation that uses the fields below, for
	// its whole length (network waits included), with a context.
	turn      chan struct{}
	conn      *conn
	presence  bool // an inventory arrived: this is the daemon's sender
	self      string
	onlineDue bool
	hosts     map[string]*hostState
	closed    bool
}

// conn is one Paho client: a new one for each connection, as Paho does not
// support reusing a client after Disconnect.
type conn struct {
	c        paho.Client
	id       string
	presence bool
	mu       sync.Mutex
	connects int   // successful connections, the first included
	lastErr  error // why the last (re)connection attempt failed
}

var (
	_ channel.Sender            = (*Sender)(nil)
	_ channel.Diagnoser         = (*Sender)(nil)
	_ channel.InventoryReceiver = (*Sender)(nil)
)

// New builds the sender for c; it reads ca_file and connects to nothing.
func New(c Config, env channel.Env) (*Sender, error) {
	b, err := parseBroker(c.Broker)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	s := &Sender{
		broker: b, username: c.Username, password: c.Password.Value, clientID: c.ClientID,
		topics: topics{prefix: or(c.TopicPrefix, DefaultTopicPrefix), discovery: or(c.DiscoveryPrefix, DefaultDiscoveryPrefix)},
		qos:    DefaultQoS, timeout: env.Timeout, turn: make(chan struct{}, 1), hosts: map[string]*hostState{},
	}
	if c.QoS != nil {
		s.qos = byte(*c.QoS)
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	if b.tls {
		s.tls = &tls.Config{ServerName: b.host, MinVersion: tls.VersionTLS12}
		if c.CAFile != "" {
			pem, err := os.ReadFile(c.CAFile)
			if err != nil {
				return nil, fmt.Errorf("ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("ca_file %s holds no PEM certificate", c.CAFile)
			}
			s.tls.RootCAs = pool
		}
	}
	return s, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Send publishes m as an event on <topic_prefix>/<host>/notification and,
// for the daemon's sender, the sensor states it changes (a test changes
// none), each with the configured QoS; it returns once the broker
// acknowledged every message.
func (s *Sender) Send(ctx context.Context, m channel.Message) error {
	if err := s.take(ctx); err != nil {
		return err
	}
	defer s.give()
	host := m.Host
	if host == "" {
		host = m.Notification.Host
	}
	if host == "" {
		host = or(s.self, "zwatch")
	}
	var pubs []publication
	if s.presence {
		h := s.host(host)
		if !m.Test {
			h.applyNotification(m.Notification, time.Now())
		}
	}
	if err := s.connect(ctx); err != nil {
		return err
	}
	if s.presence {
		pubs = s.sync()
	}
	// The event goes last: an automation it triggers sees the new states.
	pubs = append(pubs, publication{topic: s.topics.event(host), payload: event(host, m)})
	return s.publish(ctx, pubs)
}

// SetInventory makes s the daemon's sender, if it was not yet, and brings
// the broker up to date with every host's pools and disks.
func (s *Sender) SetInventory(ctx context.Context, inv channel.Inventory) error {
	if err := s.take(ctx); err != nil {
		return err
	}
	defer s.give()
	s.applyInventory(inv)
	if !s.presence {
		// Reconnect under the daemon's client id, with the last will.
		s.presence = true
		s.drop()
	}
	if err := s.connect(ctx); err != nil {
		return err
	}
	return s.publish(ctx, s.sync())
}

// Close says offline on the availability topic (the daemon's sender) and
// disconnects cleanly; later sends fail.
func (s *Sender) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.take(ctx); err != nil {
		return err
	}
	defer s.give()
	s.closed = true
	if s.conn == nil {
		return nil
	}
	var err error
	if s.conn.presence && s.conn.c.IsConnectionOpen() {
		err = s.publish(ctx, []publication{{topic: s.topics.availability(s.self), payload: []byte(payloadOffline), retain: true}})
	}
	s.drop()
	return err
}

// take waits for s's turn; give ends it.
func (s *Sender) take(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: waited for an earlier publish until the send timeout: %w", s.broker, ctx.Err())
	}
}

func (s *Sender) give() { <-s.turn }

// drop disconnects the current client, if any. DISCONNECT makes the broker
// discard the last will.
func (s *Sender) drop() {
	if s.conn != nil {
		s.conn.c.Disconnect(250)
		s.conn = nil
	}
}

// connect makes sure a connection is up or, for the daemon's sender, being
// re-established by Paho; a new connection starts with everything to
// publish again.
func (s *Sender) connect(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("%s: the channel is closed (zwatch is stopping)", s.broker)
	}
	if s.conn != nil {
		if s.conn.c.IsConnectionOpen() || s.conn.presence && s.conn.c.IsConnected() {
			return nil
		}
		s.drop()
	}
	cn := &conn{presence: s.presence, id: s.id()}
	o := paho.NewClientOptions().AddBroker(s.broker.server()).SetClientID(cn.id).
		SetProtocolVersion(4).SetCleanSession(true).SetOrderMatters(false).
		SetConnectTimeout(s.timeout).SetWriteTimeout(s.timeout).
		SetKeepAlive(30 * time.Second).SetPingTimeout(10 * time.Second).
		SetConnectRetry(false).SetAutoReconnect(cn.presence).SetMaxReconnectInterval(time.Minute).
		SetConnectionNotificationHandler(cn.notice)
	if s.tls != nil {
		o.SetTLSConfig(s.tls)
	}
	if s.username != "" {
		o.SetUsername(s.username).SetPassword(s.password)
	}
	if cn.presence {
		// The broker publishes offline when the connection dies without a
		// DISCONNECT (crash, power, network): Home Assistant then shows the
		// sensors unavailable.
		o.SetBinaryWill(s.topics.availability(s.self), []byte(payloadOffline), s.qos, true)
		o.SetOnConnectHandler(func(paho.Client) { s.reconnected(cn) })
	}
	cn.c = paho.NewClient(o)
	if err := wait(ctx, cn.c.Connect()); err != nil {
		cn.c.Disconnect(0)
		return channel.Redact(fmt.Errorf("connect to %s as %q: %w", s.broker, cn.id, err), s.password)
	}
	s.conn = cn
	s.forget()
	return nil
}

// id is the client id: the configured one (or zwatch-<host>) for the
// daemon's sender, with a random suffix for any other.
func (s *Sender) id() string {
	if s.presence {
		if s.clientID != "" {
			return s.clientID
		}
		return "zwatch-" + token(or(s.self, "host"))
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return or(s.clientID, "zwatch") + "-" + hex.EncodeToString(b[:])
}

// reconnected runs (in its own goroutine) after each connection Paho
// makes; after a reconnection it publishes everything again: the broker
// published the last will, and may have lost retained messages.
func (s *Sender) reconnected(cn *conn) {
	cn.mu.Lock()
	cn.connects++
	first := cn.connects == 1
	cn.mu.Unlock()
	if first {
		return // connect publishes after the first connection
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if s.take(ctx) != nil {
		return // the next send or inventory publishes what is due
	}
	defer s.give()
	if s.conn != cn || s.closed {
		return
	}
	s.forget()
	_ = s.publish(ctx, s.sync())
}

// notice keeps why the last connection attempt failed, for errors while
// Paho reconnects.
func (cn *conn) notice(_ paho.Client, n paho.ConnectionNotification) {
	var err error
	switch n := n.(type) {
	case paho.ConnectionNotificationFailed:
		err = n.Reason
	case paho.ConnectionNotificationLost:
		err = n.Reason
	case paho.ConnectionNotificationConnected:
	default:
		return
	}
	cn.mu.Lock()
	cn.lastErr = err
	cn.mu.Unlock()
}

// publish sends pubs with the channel's QoS, all before waiting, and waits
// for the broker to acknowledge each; the done of each runs only when all
// were taken.
func (s *Sender) publish(ctx context.Context, pubs []publication) error {
	if len(pubs) == 0 {
		return nil
	}
	if !s.conn.c.IsConnectionOpen() {
		s.conn.mu.Lock()
		why := s.conn.lastErr
		s.conn.mu.Unlock()
		if why == nil {
			why = paho.ErrNotConnected
		}
		return channel.Redact(fmt.Errorf("%s: connection lost, reconnecting: %w", s.broker, why), s.password)
	}
	toks := make([]paho.Token, len(pubs))
	for i, p := range pubs {
		toks[i] = s.conn.c.Publish(p.topic, s.qos, p.retain, p.payload)
	}
	for i, t := range toks {
		if err := wait(ctx, t); err != nil {
			return channel.Redact(fmt.Errorf("%s: publish to %s not acknowledged: %w", s.broker, pubs[i].topic, err), s.password)
		}
	}
	for _, p := range pubs {
		if p.done != nil {
			p.done()
		}
	}
	return nil
}

// wait waits for t to complete (CONNACK, PUBACK or PUBCOMP) or ctx to end.
func wait(ctx context.Context, t paho.Token) error {
	select {
	case <-t.Done():
		return t.Error()
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer from the broker within the send timeout: %w", ctx.Err())
		}
		return ctx.Err()
	}
}
