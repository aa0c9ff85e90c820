package silence

import (
	"testing"

	"github.com/zwatch/zwatch/model/alert"
)

// Silences see severity, and the pool and serial the engine joined a disk
// alert to, besides the alert's own labels.
func TestLabel(t *testing.T) {
	a := &alert.Alert{Name: "SmartFailed", Severity: alert.Critical, State: alert.Firing,
		Labels: map[string]string{"alertname": "SmartFailed", "host": "nas1", "disk": "WD-1"}}
	for name, want := range map[string]string{"severity": "critical", "pool": "tank", "serial": "WD-1", "disk": "WD-1", "vdev": "", "host": "nas1"} {
		if got := Label(a, "tank", "WD-1", name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}
