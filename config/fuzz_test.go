package config_test

import (
	"bytes"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/internal/catalog"
)

// A config file is whatever a person pasted: Parse must answer every input
// with a config or an error, never a panic, and a config it accepts must
// print (check-config) and read back the same.
func FuzzParse(f *testing.F) {
	f.Add([]byte("notify:\n  channels:\n    - {name: a, type: ntfy, topic: t, token: x}\n    - {name: b, type: email, smtp: {host: h}, to: [x@y]}\n"))
	f.Add([]byte("notify: {channels: [{type: webhook, url: 3, headers: {a: [1]}}]}\nrules: {for: {PoolState: -1s}}\n"))
	f.Add([]byte("notify:\n  channels:\n    - url: \"ntfy://ntfy.sh/t?priority=high\"\n    - {url: \"generic+http://h:8080/p?x=1\", name: ntfy}\n    - {url: \"smtp://m.example/?from=a@b.c&to=d@e.f\", topic: x}\n"))
	f.Add([]byte("rules:\n  kernel: {bursts: 3, window: 2h}\n  smart: {overrides: [{serial: WD-1, attribute: 5, ignore: true}]}\n  capacity: {warning: 85}\ncollectors: {toy: {interval: 1s}}\n"))
	cat := catalog.Config()
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := config.Parse(bytes.NewReader(b), cat)
		if err != nil {
			return
		}
		out, err := l.Config.Masked()
		if err != nil {
			t.Fatalf("accepted config does not print: %v", err)
		}
		if _, err := config.Parse(bytes.NewReader(out), cat); err != nil && !bytes.Contains(out, []byte("***")) {
			t.Fatalf("printed config does not read back: %v\n%s", err, out)
		}
	})
}
