package mqtt

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// Topics and payloads, as Home Assistant's MQTT integration documents them:
//   discovery topic <discovery_prefix>/<component>/<node_id>/<object_id>/config,
//   node_id and object_id of [a-zA-Z0-9_-], a retained JSON config, an empty
//   payload deleting the entity:
//   https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery
//   binary_sensor (state_topic, payload_on/off, device_class, availability,
//   json_attributes_topic, device, unique_id):
//   https://www.home-assistant.io/integrations/binary_sensor.mqtt/
//   event (state_topic carrying JSON with event_type, one of event_types;
//   the other keys become the event's attributes):
//   https://www.home-assistant.io/integrations/event.mqtt/

// Payloads of the state and availability topics.
const (
	payloadOn      = "ON"
	payloadOff     = "OFF"
	payloadOnline  = "online"
	payloadOffline = "offline"
)

// Event types of the notification entity.
const (
	EventFiring   = "firing"
	EventResolved = "resolved"
	EventTest     = "test"
)

// Entity kinds: a binary_sensor per pool and per disk.
const (
	kindPool = "pool"
	kindDisk = "disk"
)

// Home Assistant's recorder does not store an entity's attributes over
// 16384 bytes ("State attributes for … exceed maximum size of 16384 bytes",
// https://github.com/home-assistant/core/issues/111260), and the event's
// extra keys become its attributes: payloads stay under this.
const maxAttributes = 16384

const (
	maxAlertsListed = 20  // alerts one payload lists
	maxLine         = 255 // Home Assistant's limit for a state string: fit for any one-liner
)

// token makes s one topic level and fit for node_id and object_id:
// [a-zA-Z0-9_-] only, never empty.
func token(s string) string {
	t := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
	if t == "" {
		return "_"
	}
	return t
}

// topics names every topic of one channel.
type topics struct{ prefix, discovery string }

func (t topics) availability(self string) string {
	return t.prefix + "/" + token(self) + "/availability"
}
func (t topics) event(host string) string { return t.prefix + "/" + token(host) + "/notification" }
func (t topics) state(host, kind, name string) string {
	return t.prefix + "/" + token(host) + "/" + kind + "/" + token(name) + "/state"
}
func (t topics) attributes(host, kind, name string) string {
	return t.prefix + "/" + token(host) + "/" + kind + "/" + token(name) + "/attributes"
}
func (t topics) config(component, host, objectID string) string {
	return t.discovery + "/" + component + "/" + nodeID(host) + "/" + objectID + "/config"
}

// nodeID is the host's device: one per watched host.
func nodeID(host string) string { return "zwatch_" + token(host) }

func objectID(kind, name string) string { return kind + "_" + token(name) }

// discovery is a discovery config payload.
type discovery struct {
	Name                string   `json:"name"`
	UniqueID            string   `json:"unique_id"`
	DeviceClass         string   `json:"device_class,omitempty"`
	Icon                string   `json:"icon,omitempty"`
	StateTopic          string   `json:"state_topic"`
	JSONAttributesTopic string   `json:"json_attributes_topic,omitempty"`
	PayloadOn           string   `json:"payload_on,omitempty"`
	PayloadOff          string   `json:"payload_off,omitempty"`
	AvailabilityTopic   string   `json:"availability_topic,omitempty"`
	PayloadAvailable    string   `json:"payload_available,omitempty"`
	PayloadNotAvailable string   `json:"payload_not_available,omitempty"`
	EventTypes          []string `json:"event_types,omitempty"`
	QoS                 int      `json:"qos"`
	Device              device   `json:"device"`
	Origin              origin   `json:"origin"`
}

// device ties a host's entities together in Home Assistant's device registry.
type device struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model"`
	SWVersion    string   `json:"sw_version,omitempty"`
}

// origin says which software sent the discovery message.
type origin struct {
	Name string `json:"name"`
}

func hostDevice(h *hostState) device {
	return device{Identifiers: []string{nodeID(h.name)}, Name: "zwatch " + h.name,
		Manufacturer: "zwatch", Model: "ZFS pool and disk watch", SWVersion: h.version}
}

// eventConfig is the host's notification entity. It has no availability:
// an event has no state that goes stale, and a `zwatch notify test` sent
// while the daemon is stopped still shows.
func (s *Sender) eventConfig(h *hostState) discovery {
	return discovery{
		Name: "Notification", UniqueID: nodeID(h.name) + "_notification", Icon: "mdi:bell-alert",
		StateTopic: s.topics.event(h.name), EventTypes: []string{EventFiring, EventResolved, EventTest},
		QoS: int(s.qos), Device: hostDevice(h), Origin: origin{Name: "zwatch"},
	}
}

// entityConfig is the problem binary_sensor of one pool or disk.
func (s *Sender) entityConfig(h *hostState, e *entity) discovery {
	name, icon := "Pool "+e.name, "mdi:database"
	if e.kind == kindDisk {
		name, icon = "Disk "+e.name, "mdi:harddisk"
	}
	return discovery{
		Name: name, UniqueID: nodeID(h.name) + "_" + objectID(e.kind, e.name), DeviceClass: "problem", Icon: icon,
		StateTopic:          s.topics.state(h.name, e.kind, e.name),
		JSONAttributesTopic: s.topics.attributes(h.name, e.kind, e.name),
		PayloadOn:           payloadOn, PayloadOff: payloadOff,
		AvailabilityTopic: s.topics.availability(s.self), PayloadAvailable: payloadOnline, PayloadNotAvailable: payloadOffline,
		QoS: int(s.qos), Device: hostDevice(h), Origin: origin{Name: "zwatch"},
	}
}

// alertBrief is one alert as payloads list it.
type alertBrief struct {
	Name     string         `json:"name"`
	Severity alert.Severity `json:"severity"`
	State    alert.State    `json:"state,omitempty"`
	Pool     string         `json:"pool,omitempty"`
	Disk     string         `json:"disk,omitempty"`
	Summary  string         `json:"summary"`
	Since    *time.Time     `json:"since,omitempty"`
}

func brief(a alert.Alert, withState bool) alertBrief {
	pool, disk := targets(a)
	b := alertBrief{Name: a.Name, Severity: a.Severity, Pool: pool, Disk: disk, Summary: channel.CutRunes(channel.OneLine(a.Summary), maxLine)}
	if withState {
		b.State = a.State
	}
	if !a.StartsAt.IsZero() {
		at := a.StartsAt.UTC()
		b.Since = &at
	}
	return b
}

// briefs lists at most maxAlertsListed alerts, worst first.
func briefs(as []alert.Alert, withState bool) []alertBrief {
	as = slices.Clone(as)
	slices.SortStableFunc(as, func(a, b alert.Alert) int {
		if d := b.Severity.Rank() - a.Severity.Rank(); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := []alertBrief{}
	for i, a := range as {
		if i == maxAlertsListed {
			break
		}
		out = append(out, brief(a, withState))
	}
	return out
}

// targets names the pool and the disk (its serial) an alert concerns, the
// way the status page matches them ("" when none).
func targets(a alert.Alert) (pool, disk string) {
	pool = a.Labels["pool"]
	if pool == "" && a.Replacement != nil {
		pool = a.Replacement.Pool
	}
	for _, d := range []string{a.Labels["disk"], a.Labels["serial"], a.Evidence["serial"]} {
		if d != "" {
			return pool, d
		}
	}
	if a.Replacement != nil && a.Replacement.Disk != nil {
		disk = a.Replacement.Disk.Serial
	}
	return pool, disk
}

// problem reports whether alerts make a binary_sensor ON: a firing warning
// or critical. Information (a resilver running) is listed, not a problem.
func problem(alerts []alert.Alert) bool {
	for _, a := range alerts {
		if a.State == alert.Firing && a.Severity.Rank() >= alert.Warning.Rank() {
			return true
		}
	}
	return false
}

// poolAttributes and diskAttributes are the json_attributes of a sensor.
type poolAttributes struct {
	Host   string       `json:"host"`
	Pool   string       `json:"pool"`
	State  string       `json:"pool_state,omitempty"`
	Alerts []alertBrief `json:"alerts"`
}

type diskAttributes struct {
	Host   string       `json:"host"`
	Serial string       `json:"serial"`
	ByID   string       `json:"by_id,omitempty"`
	Model  string       `json:"model,omitempty"`
	Pool   string       `json:"pool,omitempty"`
	Vdev   string       `json:"vdev,omitempty"`
	Health string       `json:"smart_health,omitempty"`
	Alerts []alertBrief `json:"alerts"`
}

func (e *entity) attributes(host string, alerts []alert.Alert) []byte {
	var v any
	if e.kind == kindPool {
		v = poolAttributes{Host: host, Pool: e.name, State: e.pool.State, Alerts: briefs(alerts, false)}
	} else {
		d := e.disk
		v = diskAttributes{Host: host, Serial: e.name, ByID: d.ByID, Model: d.Model, Pool: d.Pool, Vdev: d.Vdev,
			Health: d.Health, Alerts: briefs(alerts, false)}
	}
	b, _ := json.Marshal(v) // plain structs of strings: cannot fail
	return b
}

// eventPayload is what the notification topic carries: event_type for
// Home Assistant, the rest as the event's attributes.
type eventPayload struct {
	EventType string         `json:"event_type"`
	ID        string         `json:"id,omitempty"`
	Host      string         `json:"host"`
	Severity  alert.Severity `json:"severity,omitempty"`
	Test      bool           `json:"test"`
	Title     string         `json:"title"`
	Summary   string         `json:"summary"`
	Text      string         `json:"text"`
	Created   *time.Time     `json:"created,omitempty"`
	Alerts    []alertBrief   `json:"alerts"`
}

// EventType is the event a notification is: test, firing or resolved.
func EventType(m channel.Message) string {
	switch {
	case m.Test:
		return EventTest
	case m.Resolved:
		return EventResolved
	}
	return EventFiring
}

// event renders m for the notification topic, its text cut so the whole
// payload stays under maxAttributes.
func event(host string, m channel.Message) []byte {
	p := eventPayload{
		EventType: EventType(m), ID: m.ID, Host: host, Severity: m.Severity, Test: m.Test,
		Title: channel.CutRunes(m.Title, maxLine), Summary: channel.CutRunes(m.Summary, maxLine),
		Alerts: briefs(m.Notification.Alerts, true),
	}
	if !m.Created.IsZero() {
		at := m.Created.UTC()
		p.Created = &at
	}
	b, _ := json.Marshal(p)
	budget := maxAttributes - len(b) - 16
	for range 4 {
		p.Text = channel.CutBytes(m.Text, max(budget, 0))
		out, _ := json.Marshal(p)
		if len(out) <= maxAttributes {
			return out
		}
		budget -= len(out) - maxAttributes + 16 // escaping made the text longer than its bytes
	}
	p.Text = ""
	out, _ := json.Marshal(p)
	return out
}
