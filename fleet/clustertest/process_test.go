package clustertest

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// The shipped configs, rewritten for a nats-server process on loopback,
// listen on the test's ports and route to the two other nodes only.
func TestProcessConfs(t *testing.T) {
	p := &Processes{Cluster: prepare(t, "../../configs/nats-cluster")}
	for i := range 3 {
		path, err := p.processConf(i)
		if err != nil {
			t.Fatal(err)
		}
		o, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		if o.Host != "127.0.0.1" || o.Port != p.ports[i] || o.HTTPPort != 0 {
			t.Errorf("node %d listens on %s:%d, monitoring port %d", i+1, o.Host, o.Port, o.HTTPPort)
		}
		if o.Cluster.Host != "127.0.0.1" || o.Cluster.Port != p.cports[i] || len(o.Routes) != 2 {
			t.Errorf("node %d: cluster %s:%d, %d routes", i+1, o.Cluster.Host, o.Cluster.Port, len(o.Routes))
		}
		for _, r := range o.Routes {
			if r.Hostname() != "127.0.0.1" || r.Port() == fmt.Sprint(p.cports[i]) {
				t.Errorf("node %d routes to %s", i+1, r)
			}
		}
		if o.TLSConfig == nil || o.Cluster.TLSConfig == nil || !o.JetStream {
			t.Errorf("node %d lost its TLS or JetStream settings", i+1)
		}
	}
}
