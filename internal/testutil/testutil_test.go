package testutil

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type note struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// post may run on another goroutine: it reports with t.Error.
func post(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %s", resp.Status)
	}
}

func TestPhoneRecordsAndWaits(t *testing.T) {
	p := NewPhone[note](t)
	if n := p.Count(func(note) bool { return true }); n != 0 {
		t.Fatalf("new phone has %d notifications", n)
	}
	// More posts than a wake-up channel could hold: the handler must not block.
	for i := 0; i < 150; i++ {
		post(t, p.URL, `{"id":"x","status":"firing"}`)
	}
	go post(t, p.URL, `{"id":"y","status":"resolved"}`)
	got := p.Wait(t, "resolved", func(n note) bool { return n.Status == "resolved" })
	if got.ID != "y" {
		t.Errorf("Wait returned %+v", got)
	}
	if n := p.Count(func(n note) bool { return n.ID == "x" }); n != 150 {
		t.Errorf("Count = %d, want 150", n)
	}
	all := p.Received()
	if len(all) != 151 || all[0].ID != "x" || all[150].ID != "y" {
		t.Errorf("Received: %d, first %+v", len(all), all[0])
	}
	all[0].ID = "changed"
	if p.Received()[0].ID != "x" {
		t.Error("Received shares the phone's slice")
	}
}

func TestWriteScriptAndPrependPath(t *testing.T) {
	dir := t.TempDir()
	path := WriteScript(t, dir, "zwatch-testutil-tool", "#!/bin/sh\necho \"ran $*\"\nexit 3\n")
	if path != filepath.Join(dir, "zwatch-testutil-tool") {
		t.Fatalf("path %s", path)
	}
	PrependPath(t, dir)
	if !strings.HasPrefix(os.Getenv("PATH"), dir+string(os.PathListSeparator)) {
		t.Fatalf("PATH = %s", os.Getenv("PATH"))
	}
	out, err := exec.Command("zwatch-testutil-tool", "a", "b").Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || string(out) != "ran a b\n" {
		t.Fatalf("out %q err %v", out, err)
	}
}
