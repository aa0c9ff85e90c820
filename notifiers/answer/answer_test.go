package answer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The key is made once, root-only, and kept; a button's data fits
// Telegram's 64 bytes and verifies; any change to it does not.
func TestKeySignVerify(t *testing.T) {
	dir := t.TempDir()
	k, err := LoadKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", st, err)
	}
	again, err := LoadKey(dir)
	if err != nil || string(again) != string(k) {
		t.Fatal("the key changed on the second load")
	}
	data := k.Sign(Action{Verb: Snooze, Incident: "3f2a9c1e"})
	if len(data) > 64 {
		t.Errorf("%q is %d bytes: more than a Telegram button carries", data, len(data))
	}
	act, err := k.Verify(data)
	if err != nil || act.Verb != Snooze || act.Incident != "3f2a9c1e" {
		t.Fatalf("%+v %v", act, err)
	}
	other, _ := LoadKey(t.TempDir())
	for _, forged := range []string{
		strings.Replace(data, "snooze", "ack", 1), strings.Replace(data, "3f2a9c1e", "3f2a9c1f", 1), other.Sign(act),
		"", "zw1 ack 3f2a9c1e", data + " x", "zw1 delete 3f2a9c1e " + data[len(data)-macLen:],
	} {
		if _, err := k.Verify(forged); err == nil {
			t.Errorf("%q verified", forged)
		}
	}
	// The replacement's verbs fit too, and a confirmation cannot be made
	// out of a question's data.
	for _, v := range []string{Replace, Confirm, Cancel} {
		d := k.Sign(Action{Verb: v, Incident: "0a1b2c3d"})
		if got, err := k.Verify(d); err != nil || got.Verb != v || len(d) > 64 {
			t.Errorf("%s: %q %+v %v", v, d, got, err)
		}
	}
	if _, err := k.Verify(strings.Replace(k.Sign(Action{Verb: Replace, Incident: "0a1b2c3d"}), "replace", "confirm", 1)); err == nil {
		t.Error("a Replace button's data, its verb changed to confirm, verified")
	}
	os.WriteFile(filepath.Join(dir, KeyFile), []byte("short"), 0o600)
	if _, err := LoadKey(dir); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a damaged key: %v", err)
	}
}

func FuzzVerify(f *testing.F) {
	k := Key(strings.Repeat("k", 32))
	f.Add(k.Sign(Action{Verb: Ack, Incident: "3f2a9c1e"}))
	f.Add("zw1 ack 3f2a9c1e AAAAAAAAAAAAAAAA")
	f.Add(k.Sign(Action{Verb: Confirm, Incident: "0a1b2c3d"}))
	f.Fuzz(func(t *testing.T, data string) {
		act, err := k.Verify(data)
		if err == nil && k.Sign(act) != data {
			t.Fatalf("%q verified as %+v, which signs as %q", data, act, k.Sign(act))
		}
	})
}
