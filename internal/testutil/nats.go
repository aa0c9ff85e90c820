package testutil

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StartNATS starts a standalone nats-server with JetStream on 127.0.0.1 for
// a test: port -1 takes any free port; a fixed port (FreePort) and the same
// store let a test stop it and start it again where clients reconnect.
func StartNATS(t testing.TB, port int, store string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return s
}

// FreePort is a TCP port on 127.0.0.1 nobody listened on a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
