package provision

import "testing"

// TestPreflightChecksTable keeps the table well formed: a check with no
// func would never run, one with two would run twice.
func TestPreflightChecksTable(t *testing.T) {
	checks := preflightChecks()
	if len(checks) == 0 {
		t.Fatal("no pre-flight checks")
	}
	for i, c := range checks {
		if c.name == "" {
			t.Errorf("check %d has no name", i)
		}
		set := 0
		for _, f := range []bool{c.onDisk != nil, c.onVdev != nil, c.onPool != nil} {
			if f {
				set++
			}
		}
		if set != 1 {
			t.Errorf("check %d (%s) sets %d of onDisk, onVdev, onPool; want exactly 1", i, c.name, set)
		}
	}
}
