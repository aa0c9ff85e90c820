package pipeline

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/zwatch/zwatch/model/alert"
)

// An incident is one notification group: what one page told. People name
// it by IncidentID to answer it (zwatch ack, a button on the phone).

// IncidentID names the group with key groupKey: the first eight hex digits
// of the key's SHA-256, the same on every server and across restarts.
func IncidentID(groupKey string) string {
	sum := sha256.Sum256([]byte(groupKey))
	return hex.EncodeToString(sum[:4])
}

// Acknowledge marks the firing alerts of incident id in b as taken on by
// ack (nil: no longer), and returns how many it marked. Their repeats stop
// (unsent); the severity each has now is the one acknowledged.
func Acknowledge(b *Book, id string, ack *alert.Ack) int {
	n := 0
	for _, t := range b.Alerts {
		if t.A.Incident != id || t.A.State != alert.Firing {
			continue
		}
		if ack == nil {
			if t.A.Ack != nil {
				t.A.Ack = nil
				n++
			}
			continue
		}
		k := *ack
		k.Severity = t.A.Severity
		t.A.Ack = &k
		n++
	}
	return n
}

// joinGroup puts t in group key, the incident people know it by.
func joinGroup(t *Tracked, key string) {
	t.Group = key
	t.A.Incident = IncidentID(key)
}
