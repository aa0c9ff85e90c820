package rules

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
)

// Hosts written together (a server's start, a backlog drained) write
// their bookkeeping again spread over the half minute after a minute, each
// once, not all in the same second a minute later.
func TestBookkeepingSpreadsOverHosts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, kv := openStateBucket(ctx, t)
	e := NewEngine(config.DefaultRules(), nil)
	const hosts = 200
	for i := range hosts {
		h := newHostState(fmt.Sprintf("nas%03d", i))
		h.dirty = true
		e.hosts[h.Host] = h
	}
	start := time.Now()
	if err := e.Write(ctx, kv, false, true, start); err != nil {
		t.Fatal(err)
	}
	written := map[string]int{}
	perSecond := make([]int, 91)
	for s := 1; s <= 90; s++ {
		revs := map[string]uint64{}
		for name, h := range e.hosts {
			h.applied("facts", "zpool_list", uint64(s)) // a fact that changed only bookkeeping
			revs[name] = h.rev
		}
		if err := e.Write(ctx, kv, false, true, start.Add(time.Duration(s)*time.Second)); err != nil {
			t.Fatal(err)
		}
		for name, h := range e.hosts {
			if h.rev != revs[name] {
				written[name]++
				perSecond[s]++
			}
		}
	}
	for s, n := range perSecond[:60] {
		if n > 0 {
			t.Errorf("%d hosts written %d s after they were saved: want none before a minute", n, s)
		}
	}
	for name, h := range e.hosts {
		if written[name] != 1 {
			t.Errorf("%s: bookkeeping written %d times in the 90 s after its save (period %v), want once", name, written[name], h.bookkeepEvery)
		}
	}
	most := 0
	for _, n := range perSecond {
		most = max(most, n)
	}
	if most > hosts/10 {
		t.Errorf("%d of %d hosts written in the same second: %v", most, hosts, perSecond[60:])
	}
	t.Logf("hosts written per second, 60-90 s after their save: %v", perSecond[60:])
}

// A host's period is touchSaveEvery and up to half of it more, the same
// at every call, and hosts of similar names cover the whole range.
func TestBookkeepingPeriod(t *testing.T) {
	lo, hi := 2*touchSaveEvery, time.Duration(0)
	for i := range 1000 {
		host := fmt.Sprintf("host%04d", i)
		p := bookkeepingPeriod(host)
		if p < touchSaveEvery || p >= touchSaveEvery*3/2 {
			t.Fatalf("%s: period %v, want in [%v, %v)", host, p, touchSaveEvery, touchSaveEvery*3/2)
		}
		if again := bookkeepingPeriod(host); again != p {
			t.Fatalf("%s: period %v, then %v", host, p, again)
		}
		lo, hi = min(lo, p), max(hi, p)
	}
	if lo > touchSaveEvery+touchSaveEvery/20 || hi < touchSaveEvery*3/2-touchSaveEvery/20 {
		t.Errorf("periods of 1,000 hosts from %v to %v: want them over the whole range", lo, hi)
	}
}
