package mqtt

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// What the daemon's sender shows of each host. The inventory (read from
// the rule engine's state, like the status page) says which pools and disks
// exist and which alerts fire; a notification delivered after the inventory
// was read is newer and counts over it until the next inventory.

// hostState is one watched host as the broker should show it.
type hostState struct {
	name    string
	version string
	// inventory: the latest inventory's firing alerts, by fingerprint, and
	// when the daemon began reading it.
	inventory   map[string]alert.Alert
	inventoryAt time.Time
	// newer are alerts from notifications delivered after inventoryAt.
	newer    map[string]noted
	entities map[string]*entity // by kind + "/" + name
	// eventAnnounced: the notification entity's config is published on
	// this connection.
	eventAnnounced bool
}

type noted struct {
	a  alert.Alert
	at time.Time
}

// entity is one pool's or disk's binary_sensor.
type entity struct {
	kind, name string
	pool       channel.InventoryPool
	disk       channel.InventoryDisk
	// listed: in the latest inventory. An entity that is neither listed nor
	// named by a firing alert is removed from Home Assistant.
	listed bool
	// announced: its config is published on this connection; shown: on
	// some connection of this sender; sent: the state and attributes last
	// published on this connection.
	announced, shown bool
	sent             string
}

func newHost(name string) *hostState {
	return &hostState{name: name, inventory: map[string]alert.Alert{}, newer: map[string]noted{}, entities: map[string]*entity{}}
}

// host returns the state of the host named name, new if unknown.
func (s *Sender) host(name string) *hostState {
	h := s.hosts[name]
	if h == nil {
		h = newHost(name)
		s.hosts[name] = h
	}
	return h
}

func (h *hostState) entity(kind, name string) *entity {
	k := kind + "/" + name
	e := h.entities[k]
	if e == nil {
		e = &entity{kind: kind, name: name}
		h.entities[k] = e
	}
	return e
}

func fingerprint(a alert.Alert) string {
	if a.Fingerprint != "" {
		return a.Fingerprint
	}
	return alert.Fingerprint(a.Labels)
}

// applyInventory takes a new inventory: it replaces the listed pools and
// disks and the firing alerts of each host it names, and drops what
// notifications said before it was read.
func (s *Sender) applyInventory(inv channel.Inventory) {
	if inv.Self != "" {
		s.self = inv.Self
	}
	if s.self != "" {
		s.host(s.self) // the daemon's own host has its notification entity from the start
	}
	for _, hi := range inv.Hosts {
		h := s.host(hi.Host)
		if h.version != hi.Version {
			// The device block carries the version: announce again.
			h.version, h.eventAnnounced = hi.Version, false
			for _, e := range h.entities {
				e.announced = false
			}
		}
		h.inventory = map[string]alert.Alert{}
		for _, a := range hi.Firing {
			h.inventory[fingerprint(a)] = a
		}
		h.inventoryAt = inv.At
		for fp, n := range h.newer {
			if n.at.Before(inv.At) {
				delete(h.newer, fp)
			}
		}
		for _, e := range h.entities {
			e.listed = false
		}
		for _, p := range hi.Pools {
			e := h.entity(kindPool, p.Name)
			e.listed, e.pool = true, p
		}
		for _, d := range hi.Disks {
			e := h.entity(kindDisk, d.Serial)
			e.listed, e.disk = true, d
		}
	}
}

// applyNotification takes the alerts of a delivered notification as newer
// than the inventory.
func (h *hostState) applyNotification(n alert.Notification, at time.Time) {
	for _, a := range n.Alerts {
		if a.State == alert.Firing || a.State == alert.Resolved {
			h.newer[fingerprint(a)] = noted{a: a, at: at}
		}
	}
}

// firing is the host's firing alerts: the inventory's, updated by the
// notifications that came after it.
func (h *hostState) firing() []alert.Alert {
	all := maps.Clone(h.inventory)
	for fp, n := range h.newer {
		if n.a.State == alert.Firing {
			all[fp] = n.a
		} else {
			delete(all, fp)
		}
	}
	out := slices.Collect(maps.Values(all))
	slices.SortFunc(out, func(a, b alert.Alert) int { return strings.Compare(fingerprint(a), fingerprint(b)) })
	return out
}

// publication is one message to publish; done runs once the broker took it.
type publication struct {
	topic   string
	payload []byte
	retain  bool
	done    func()
}

// sync lists what the broker lacks for the broker to show every host as
// the sender knows it: availability, each host's notification entity, each
// pool's and disk's config, state and attributes, and the removal of
// entities that neither exist nor are named by a firing alert.
func (s *Sender) sync() []publication {
	var out []publication
	if s.onlineDue {
		out = append(out, publication{topic: s.topics.availability(s.self), payload: []byte(payloadOnline), retain: true,
			done: func() { s.onlineDue = false }})
	}
	for _, name := range slices.Sorted(maps.Keys(s.hosts)) {
		h := s.hosts[name]
		if !h.eventAnnounced {
			out = append(out, publication{topic: s.topics.config("event", h.name, "notification"),
				payload: mustJSON(s.eventConfig(h)), retain: true, done: func() { h.eventAnnounced = true }})
		}
		concerns := map[string][]alert.Alert{}
		for _, a := range h.firing() {
			pool, disk := targets(a)
			if pool != "" {
				concerns[kindPool+"/"+pool] = append(concerns[kindPool+"/"+pool], a)
				h.entity(kindPool, pool)
			}
			if disk != "" {
				concerns[kindDisk+"/"+disk] = append(concerns[kindDisk+"/"+disk], a)
				h.entity(kindDisk, disk)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(h.entities)) {
			out = append(out, s.syncEntity(h, k, concerns[k])...)
		}
	}
	return out
}

// syncEntity lists what one entity lacks, or its removal.
func (s *Sender) syncEntity(h *hostState, key string, alerts []alert.Alert) []publication {
	e := h.entities[key]
	state := s.topics.state(h.name, e.kind, e.name)
	attrs := s.topics.attributes(h.name, e.kind, e.name)
	cfg := s.topics.config("binary_sensor", h.name, objectID(e.kind, e.name))
	if !e.listed && len(alerts) == 0 {
		if !e.shown {
			delete(h.entities, key) // never shown: nothing to take back
			return nil
		}
		// An empty retained message deletes the entity and the retained
		// state; the delete runs last, once all three are gone.
		return []publication{
			{topic: cfg, retain: true},
			{topic: state, retain: true},
			{topic: attrs, retain: true, done: func() { delete(h.entities, key) }},
		}
	}
	var out []publication
	if !e.announced {
		out = append(out, publication{topic: cfg, payload: mustJSON(s.entityConfig(h, e)), retain: true,
			done: func() { e.announced, e.shown = true, true }})
	}
	value := payloadOff
	if problem(alerts) {
		value = payloadOn
	}
	body := e.attributes(h.name, alerts)
	if sent := value + "\x00" + string(body); sent != e.sent {
		// Attributes first: an automation triggered by the state reads them.
		out = append(out,
			publication{topic: attrs, payload: body, retain: true},
			publication{topic: state, payload: []byte(value), retain: true, done: func() { e.sent = sent }})
	}
	return out
}

// forget marks everything unpublished, for a new connection: a broker
// restarted without persistence has lost the retained messages.
func (s *Sender) forget() {
	s.onlineDue = s.presence
	for _, h := range s.hosts {
		h.eventAnnounced = false
		for _, e := range h.entities {
			e.announced, e.sent = false, ""
		}
	}
}

// mustJSON marshals the payload structs, which hold only strings, numbers
// and lists of them: json.Marshal cannot fail on them.
func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
