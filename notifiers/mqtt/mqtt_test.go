package mqtt_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/mosquittotest"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/mqtt"
)

// The payloads checked here are the ones Home Assistant documents:
// discovery topics and configs, https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery
// binary_sensor, https://www.home-assistant.io/integrations/binary_sensor.mqtt/
// event, https://www.home-assistant.io/integrations/event.mqtt/

const (
	inventoryDisk = "WD-WCC7K0000001"
	sampleDisk    = "WD-WX32D7088AF1" // the disk of notifiers.SampleNotification, in no inventory here
)

func mqttChannel(name string, c mqtt.Config) config.ChannelConfig {
	return config.ChannelConfig{Name: name, Type: mqtt.Service.Name(), Settings: c}
}

// build builds the channel as zwatch does and closes its sender when the
// test ends.
func build(t *testing.T, c mqtt.Config) notifiers.Channel {
	t.Helper()
	ch := notifytest.BuildOne(t, mqttChannel("ha", c))
	t.Cleanup(func() { _ = ch.Sender.(*mqtt.Sender).Close() })
	return ch
}

func inventory() channel.Inventory {
	return channel.Inventory{Self: "nas1", At: time.Now(), Hosts: []channel.HostInventory{{
		Host: "nas1", Version: "1.4.0",
		Pools: []channel.InventoryPool{{Name: "tank", State: "ONLINE"}, {Name: "vault", State: "ONLINE"}},
		Disks: []channel.InventoryDisk{{Serial: inventoryDisk, ByID: "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_" + inventoryDisk,
			Model: "WDC WD40EFRX-68N32N0", Pool: "vault", Vdev: "raidz2-0", Health: "passed"}},
	}}}
}

func setInventory(t *testing.T, ch notifiers.Channel, inv channel.Inventory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Sender.(channel.InventoryReceiver).SetInventory(ctx, inv); err != nil {
		t.Fatalf("SetInventory: %v (fix: %s)", err, ch.Fix(err))
	}
}

func send(t *testing.T, ch notifiers.Channel, n alert.Notification) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ch.Send(ctx, notifiers.RenderGuided(n, notifytest.Guide)); err != nil {
		t.Fatalf("Send: %v (fix: %s)", err, ch.Fix(err))
	}
}

func resolved(n alert.Notification, id string) alert.Notification {
	n.ID, n.Status = id, alert.Resolved
	n.Alerts = slices.Clone(n.Alerts)
	end := time.Now()
	for i := range n.Alerts {
		n.Alerts[i].State, n.Alerts[i].EndsAt = alert.Resolved, &end
	}
	return n
}

func wantFields(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		g, _ := json.Marshal(got[k])
		w, _ := json.Marshal(v)
		if string(g) != string(w) {
			t.Errorf("%s: %s = %s, want %s", what, k, g, w)
		}
	}
}

// TestHomeAssistantEntitiesFollowTheAlerts: the daemon's sender announces
// the host as a device with a problem sensor per pool and disk, retained,
// all OFF; a firing notification turns the pool and its disk ON (a sensor
// for the disk only the notification names appears) and is an event after
// the states changed; the resolved notice turns them OFF and removes the
// disk's sensor; a test notice is only an event.
func TestHomeAssistantEntitiesFollowTheAlerts(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	live := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	ch := build(t, mqtt.Config{Broker: br.URL()})
	setInventory(t, ch, inventory())

	// A client subscribing now gets what Home Assistant gets when it starts.
	late := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	retained := func(topic string) mosquittotest.Message {
		m := late.On(t, 0, topic, nil)
		if !m.Retained {
			t.Errorf("%s is not retained", topic)
		}
		return m
	}
	if m := retained("zwatch/nas1/availability"); m.Payload != "online" {
		t.Errorf("availability %q", m.Payload)
	}
	dev := map[string]any{"identifiers": []string{"zwatch_nas1"}, "name": "zwatch nas1", "manufacturer": "zwatch",
		"model": "ZFS pool and disk watch", "sw_version": "1.4.0"}
	vault := retained("homeassistant/binary_sensor/zwatch_nas1/pool_vault/config").JSON(t)
	wantFields(t, "vault config", vault, map[string]any{
		"name": "Pool vault", "unique_id": "zwatch_nas1_pool_vault", "device_class": "problem",
		"state_topic": "zwatch/nas1/pool/vault/state", "json_attributes_topic": "zwatch/nas1/pool/vault/attributes",
		"payload_on": "ON", "payload_off": "OFF",
		"availability_topic": "zwatch/nas1/availability", "payload_available": "online", "payload_not_available": "offline",
		"qos": 1, "device": dev, "origin": map[string]any{"name": "zwatch"},
	})
	disk := retained("homeassistant/binary_sensor/zwatch_nas1/disk_" + inventoryDisk + "/config").JSON(t)
	wantFields(t, "disk config", disk, map[string]any{"name": "Disk " + inventoryDisk, "unique_id": "zwatch_nas1_disk_" + inventoryDisk,
		"device_class": "problem", "state_topic": "zwatch/nas1/disk/" + inventoryDisk + "/state", "device": dev})
	retained("homeassistant/binary_sensor/zwatch_nas1/pool_tank/config")
	ev := retained("homeassistant/event/zwatch_nas1/notification/config").JSON(t)
	wantFields(t, "event config", ev, map[string]any{"name": "Notification", "unique_id": "zwatch_nas1_notification",
		"state_topic": "zwatch/nas1/notification", "event_types": []string{"firing", "resolved", "test"}, "device": dev})
	if _, ok := ev["availability_topic"]; ok {
		t.Error("the event entity has an availability topic: a test sent while the daemon is stopped would not show")
	}
	for _, topic := range []string{"zwatch/nas1/pool/vault/state", "zwatch/nas1/pool/tank/state", "zwatch/nas1/disk/" + inventoryDisk + "/state"} {
		if m := retained(topic); m.Payload != "OFF" {
			t.Errorf("%s = %q, want OFF", topic, m.Payload)
		}
	}
	attrs := retained("zwatch/nas1/disk/" + inventoryDisk + "/attributes").JSON(t)
	wantFields(t, "disk attributes", attrs, map[string]any{"host": "nas1", "serial": inventoryDisk, "model": "WDC WD40EFRX-68N32N0",
		"pool": "vault", "vdev": "raidz2-0", "smart_health": "passed", "alerts": []any{}})

	// A firing page.
	mark := live.Mark()
	send(t, ch, notifytest.Firing("nas1", "n-1"))
	event := live.On(t, mark, "zwatch/nas1/notification", nil)
	if event.Retained {
		t.Error("the notification event is retained: Home Assistant would replay it on each restart")
	}
	e := event.JSON(t)
	wantFields(t, "firing event", e, map[string]any{"event_type": "firing", "id": "n-1", "host": "nas1", "severity": "critical",
		"test": false, "summary": notifytest.WantSummary, "title": "zwatch nas1: CRITICAL"})
	if text, _ := e["text"].(string); !strings.Contains(text, notifytest.GuideText) {
		t.Errorf("event text lacks the guide: %q", text)
	}
	if a, _ := e["alerts"].([]any); len(a) != 1 || a[0].(map[string]any)["name"] != "ZpoolVdevFaulted" ||
		a[0].(map[string]any)["pool"] != "vault" || a[0].(map[string]any)["disk"] != sampleDisk || a[0].(map[string]any)["state"] != "firing" {
		t.Errorf("event alerts %v", e["alerts"])
	}
	since := live.Since(mark)
	eventAt := slices.IndexFunc(since, func(m mosquittotest.Message) bool { return m.Topic == "zwatch/nas1/notification" })
	for _, topic := range []string{"zwatch/nas1/pool/vault/state", "zwatch/nas1/disk/" + sampleDisk + "/state", "homeassistant/binary_sensor/zwatch_nas1/disk_" + sampleDisk + "/config"} {
		at := slices.IndexFunc(since, func(m mosquittotest.Message) bool { return m.Topic == topic })
		if at < 0 || at > eventAt {
			t.Errorf("%s not published before the event (at %d, event at %d)", topic, at, eventAt)
		}
	}
	if m := live.On(t, mark, "zwatch/nas1/pool/vault/state", nil); m.Payload != "ON" {
		t.Errorf("vault state %q, want ON", m.Payload)
	}
	if m := live.On(t, mark, "zwatch/nas1/disk/"+sampleDisk+"/state", nil); m.Payload != "ON" {
		t.Errorf("disk state %q, want ON", m.Payload)
	}
	va := live.On(t, mark, "zwatch/nas1/pool/vault/attributes", nil).JSON(t)
	if a, _ := va["alerts"].([]any); len(a) != 1 || a[0].(map[string]any)["severity"] != "critical" {
		t.Errorf("vault attributes %v", va)
	}
	for _, m := range since {
		if m.Topic == "zwatch/nas1/pool/tank/state" {
			t.Errorf("tank's state was published again though it did not change: %q", m.Payload)
		}
	}

	// Its resolved notice.
	mark = live.Mark()
	send(t, ch, resolved(notifytest.Firing("nas1", "n-1"), "n-2"))
	if e := live.On(t, mark, "zwatch/nas1/notification", nil).JSON(t); e["event_type"] != "resolved" || e["id"] != "n-2" {
		t.Errorf("resolved event %v", e)
	}
	live.On(t, mark, "zwatch/nas1/pool/vault/state", mosquittotest.Is("OFF"))
	// The disk is in no inventory: its sensor goes with its last alert.
	live.On(t, mark, "homeassistant/binary_sensor/zwatch_nas1/disk_"+sampleDisk+"/config", mosquittotest.Is(""))
	live.On(t, mark, "zwatch/nas1/disk/"+sampleDisk+"/state", mosquittotest.Is(""))

	// A test: an event, no state.
	mark = live.Mark()
	send(t, ch, notifiers.SampleNotification("nas1"))
	if e := live.On(t, mark, "zwatch/nas1/notification", nil).JSON(t); e["event_type"] != "test" || e["test"] != true {
		t.Errorf("test event %v", e)
	}
	for _, m := range live.Since(mark) {
		if strings.HasSuffix(m.Topic, "/state") {
			t.Errorf("a test changed %s to %q", m.Topic, m.Payload)
		}
	}
}

// TestInventoryFiringAndRemovedDisks: alerts firing when the daemon starts
// show from its first inventory; a notification newer than an inventory
// counts over it; a disk gone from the inventory loses its sensor.
func TestInventoryFiringAndRemovedDisks(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	live := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	ch := build(t, mqtt.Config{Broker: br.URL(), TopicPrefix: "site/nas", DiscoveryPrefix: "ha"})
	inv := inventory()
	firing := notifytest.Firing("nas1", "n-1").Alerts[0]
	inv.Hosts[0].Firing = []alert.Alert{firing}
	setInventory(t, ch, inv)
	live.On(t, 0, "site/nas/nas1/pool/vault/state", mosquittotest.Is("ON"))
	live.On(t, 0, "site/nas/nas1/pool/tank/state", mosquittotest.Is("OFF"))
	live.On(t, 0, "site/nas/nas1/disk/"+sampleDisk+"/state", mosquittotest.Is("ON"))
	live.On(t, 0, "ha/binary_sensor/zwatch_nas1/pool_vault/config", nil)

	// Resolved by a notification; an inventory read before it still has
	// the alert firing and does not turn the pool back ON.
	stale := inv
	stale.At = time.Now()
	mark := live.Mark()
	send(t, ch, resolved(notifytest.Firing("nas1", "n-1"), "n-2"))
	live.On(t, mark, "site/nas/nas1/pool/vault/state", mosquittotest.Is("OFF"))
	stale.At = stale.At.Add(-time.Second)
	mark = live.Mark()
	setInventory(t, ch, stale)
	// A later inventory without the alert and without the disk.
	inv.At, inv.Hosts[0].Firing, inv.Hosts[0].Disks = time.Now(), nil, nil
	setInventory(t, ch, inv)
	live.On(t, mark, "ha/binary_sensor/zwatch_nas1/disk_"+inventoryDisk+"/config", mosquittotest.Is(""))
	for _, m := range live.Since(mark) {
		if m.Topic == "site/nas/nas1/pool/vault/state" {
			t.Errorf("vault state changed to %q by an inventory older than the resolved notice", m.Payload)
		}
	}
}
