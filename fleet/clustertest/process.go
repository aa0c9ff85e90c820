package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// Processes is the example cluster run as three nats-server processes on
// loopback, for benchmarks that measure the nodes apart from the process
// that runs zwatch (its memory and CPU).
type Processes struct {
	*Cluster
	Cmds [3]*exec.Cmd
}

// StartProcesses starts confDir's three nodes with the nats-server binary
// bin, on the ports and in the directory Start would use.
func StartProcesses(t testing.TB, confDir, bin string) *Processes {
	t.Helper()
	p := &Processes{Cluster: prepare(t, confDir)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		for _, cmd := range p.Cmds {
			if cmd != nil && cmd.Process != nil {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
		for _, cmd := range p.Cmds {
			if cmd != nil && cmd.Process != nil {
				done := make(chan struct{})
				go func() { _ = cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
				}
			}
		}
		cancel()
	})
	for i := range 3 {
		conf, err := p.processConf(i)
		if err != nil {
			t.Fatal(err)
		}
		log, err := os.Create(filepath.Join(p.Dir, fmt.Sprintf("node-%d.log", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		cmd := exec.CommandContext(ctx, bin, "-c", conf)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start nats-server %s: %v", bin, err)
		}
		p.Cmds[i] = cmd
	}
	for i := range 3 {
		if err := waitListening(p.ports[i], 20*time.Second); err != nil {
			t.Fatalf("node %d (%s): %v; its log: %s", i+1, bin, err, filepath.Join(p.Dir, fmt.Sprintf("node-%d.log", i+1)))
		}
	}
	return p
}

// processConf writes node i's config with the test's ports, routes and
// no monitoring port, as Options sets them for an in-process node.
func (p *Processes) processConf(i int) (string, error) {
	raw, err := os.ReadFile(p.confs[i])
	if err != nil {
		return "", err
	}
	s := string(raw)
	replace := func(old, new string) {
		if err == nil && !strings.Contains(s, old) {
			err = fmt.Errorf("%s: %q not found", p.confs[i], old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	replace("listen: 0.0.0.0:4222", fmt.Sprintf("listen: 127.0.0.1:%d", p.ports[i]))
	replace("listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", p.cports[i]))
	replace("http: 127.0.0.1:8222", "")
	for j := range 3 {
		if j != i {
			replace(fmt.Sprintf("nats-route://nats-%d.example.net:6222", j+1), fmt.Sprintf("nats-route://127.0.0.1:%d", p.cports[j]))
		}
	}
	if err != nil {
		return "", err
	}
	path := filepath.Join(p.Dir, fmt.Sprintf("node-%d.process.conf", i+1))
	return path, os.WriteFile(path, []byte(s), 0o600)
}

func waitListening(port int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on port %d after %v", port, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// CPU is the CPU time (user and system) node i has used so far.
func (p *Processes) CPU(i int) (time.Duration, error) {
	proc, err := procfs.NewProc(p.Cmds[i].Process.Pid)
	if err != nil {
		return 0, err
	}
	s, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return time.Duration(s.CPUTime() * float64(time.Second)), nil
}

// RSS is node i's resident memory in bytes.
func (p *Processes) RSS(i int) (int64, error) {
	proc, err := procfs.NewProc(p.Cmds[i].Process.Pid)
	if err != nil {
		return 0, err
	}
	s, err := proc.NewStatus()
	if err != nil {
		return 0, err
	}
	return int64(s.VmRSS), nil
}
