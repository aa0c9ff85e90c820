package alert

import "testing"

func TestFingerprintIgnoresOrderAndSeparatesValues(t *testing.T) {
	a := Fingerprint(map[string]string{"alertname": "VdevState", "pool": "vault", "vdev": "sdc"})
	b := Fingerprint(map[string]string{"vdev": "sdc", "pool": "vault", "alertname": "VdevState"})
	if a != b {
		t.Fatal("fingerprint depends on map order")
	}
	// "ab"+"c" must not collide with "a"+"bc".
	if Fingerprint(map[string]string{"k": "ab", "l": "c"}) == Fingerprint(map[string]string{"k": "a", "l": "bc"}) {
		t.Fatal("label boundaries not separated")
	}
}

func TestMaxSeverity(t *testing.T) {
	n := Notification{Alerts: []Alert{{Severity: Critical, State: Resolved}, {Severity: Warning, State: Firing}}}
	if n.MaxSeverity() != Warning {
		t.Fatalf("firing alerts decide: got %s", n.MaxSeverity())
	}
	n.Alerts[1].State = Resolved
	if n.MaxSeverity() != Critical {
		t.Fatalf("all resolved: got %s", n.MaxSeverity())
	}
}
