package bus

import (
	"os"
	"testing"
	"time"
)

// FuzzLoadAuth: whatever the credentials file holds, LoadAuth returns an
// error or credentials with the server identity, never panics.
func FuzzLoadAuth(f *testing.F) {
	dir := f.TempDir()
	if _, err := EnsureAuth(dir); err != nil {
		f.Fatal(err)
	}
	if _, err := AddAgent(dir, "nas1", false, time.Now()); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(AuthPath(dir))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"version":1,"server":{"user":"zwatch-server","password":"x"},"agents":null}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := t.TempDir()
		if _, err := EnsureAuth(d); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(AuthPath(d), data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := LoadAuth(d)
		if err == nil && (a.Server.User != ServerUser || len(a.serverUsers()) != len(a.Agents)+1) {
			t.Fatalf("accepted %q as %+v", data, a)
		}
	})
}
