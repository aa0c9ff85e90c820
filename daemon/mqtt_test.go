package daemon

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwatch/zwatch/internal/mosquittotest"
)

// TestHomeAssistantSeesARealRun runs zwatch on the recorded outputs of a
// degraded pool with an MQTT channel to a real Mosquitto, and reads what
// Home Assistant would: from the daemon's inventory, a problem sensor for
// each pool and each disk SMART read, healthy ones OFF; vault's ON once its
// alert fires, with the page as an event; the host unavailable once zwatch
// stops.
func TestHomeAssistantSeesARealRun(t *testing.T) {
	br := mosquittotest.Start(t, mosquittotest.Options{})
	w := mosquittotest.Watch(t, br.Addr(br.Port), "", "", "#")
	dir := t.TempDir()
	zpool, zfsCmd, smartctl := standInTools(t, dir)
	cfg := fmt.Sprintf(`
host: nas1
state_dir: %s
zfs: {zpool: %s, zfs: %s, list_interval: 1s, status_interval: 1s, follow_events: false}
smart:
  smartctl: %s
  devices:
    - device: /dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001
    - device: /dev/disk/by-id/scsi-35000c500a0000001
kernel: {enabled: false}
http: {listen: ""}
rules: {disabled: [MonitoringBlindSpot]}
notify:
  console: false
  channels:
    - {name: ha, type: mqtt, broker: %q}
`, filepath.Join(dir, "state"), zpool, zfsCmd, smartctl, br.URL())
	_, stop := startDaemon(t, cfg, Options{})

	within := 90 * time.Second
	on := func(topic, payload string) {
		t.Helper()
		w.Wait(t, 0, within, topic+" = "+payload, func(m mosquittotest.Message) bool { return m.Topic == topic && m.Payload == payload })
	}
	on("zwatch/nas1/availability", "online")
	for _, obj := range []string{"pool_fast", "pool_vault", "disk_WD-WCC7K0000001", "disk_ZWS0001"} {
		w.Wait(t, 0, within, obj+" config", func(m mosquittotest.Message) bool {
			return m.Topic == "homeassistant/binary_sensor/zwatch_nas1/"+obj+"/config" && m.Payload != ""
		})
	}
	w.Wait(t, 0, within, "the event entity", func(m mosquittotest.Message) bool {
		return m.Topic == "homeassistant/event/zwatch_nas1/notification/config"
	})
	on("zwatch/nas1/pool/fast/state", "OFF")
	on("zwatch/nas1/disk/WD-WCC7K0000001/state", "OFF")
	on("zwatch/nas1/pool/vault/state", "ON")
	ev := w.Wait(t, 0, within, "a firing event", func(m mosquittotest.Message) bool {
		return m.Topic == "zwatch/nas1/notification"
	}).JSON(t)
	if ev["event_type"] != "firing" || ev["host"] != "nas1" {
		t.Errorf("event %v", ev)
	}

	mark := w.Mark()
	stop()
	w.Wait(t, mark, 10*time.Second, "offline when zwatch stops", func(m mosquittotest.Message) bool {
		return m.Topic == "zwatch/nas1/availability" && m.Payload == "offline"
	})
}
