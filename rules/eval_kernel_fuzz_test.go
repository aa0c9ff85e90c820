package rules

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/kernlog"
)

// FuzzEvalKernel: any bytes read as a saved kernel log either are none
// (ErrNotKernelLog) or become facts the engine takes without error, within
// the bounds of the kernel history. Seeds: every real log in testdata.
func FuzzEvalKernel(f *testing.F) {
	for _, glob := range []string{kernelLogs + "*.txt", cap232l + "l*.kmsg.txt", cap232l + "l*.journalctl-k-o-json.json"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	cfg := config.DefaultRules()
	f.Fuzz(func(t *testing.T, data []byte) {
		envs, err := kernelEnvelopes("fuzz", data, t0, kernelConfig.of(&cfg))
		if err != nil {
			if !errors.Is(err, kernlog.ErrNotKernelLog) {
				t.Fatalf("not a kernel log, yet not ErrNotKernelLog: %v", err)
			}
			return
		}
		e := NewEngine(cfg, nil)
		for _, env := range envs {
			if err := e.Observe(env, t0); err != nil {
				t.Fatal(err)
			}
		}
		if h := e.hosts[EvalHost]; h != nil && len(kernelMemory.peek(h).disks()) > maxKernelDisks {
			t.Fatalf("%d disks", len(kernelMemory.peek(h).disks()))
		}
	})
}
