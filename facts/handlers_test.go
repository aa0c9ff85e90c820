package facts

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zwatch/zwatch/bus"
	"github.com/zwatch/zwatch/model/smart"
)

// seen is a reader's state in these tests: what its handlers were given.
type seen struct {
	status *StatusData
	serial string
	host   string
}

func envelope(t *testing.T, k Kind, data any) (bus.Envelope, []byte) {
	t.Helper()
	msg, err := bus.Wrap(k.Name(), "nas1", "test", time.Unix(100, 0), data)
	if err != nil {
		t.Fatal(err)
	}
	env, err := bus.Decode(msg, k.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return env, msg
}

func TestHandlersDecodeEachKindIntoItsPayload(t *testing.T) {
	var hs Handlers[*seen]
	On(&hs, Smart, func(s *seen, env bus.Envelope, r *smart.Report) error {
		s.serial, s.host = r.Serial, env.Host
		return nil
	})
	On(&hs, ZpoolStatus, func(s *seen, _ bus.Envelope, d *StatusData) error {
		s.status = d
		return nil
	})
	if got := hs.Kinds(); len(got) != 2 || got[0] != Kind(Smart) || got[1] != Kind(ZpoolStatus) {
		t.Fatalf("Kinds() = %v, want smart and zpool.status in that order", got)
	}
	env, msg := envelope(t, Smart, smart.Report{Serial: "WD-1"})
	h, ok := hs.Lookup("smart")
	if !ok || h.Kind() != Kind(Smart) {
		t.Fatalf("Lookup(smart) = %v %v", h.Kind(), ok)
	}
	var s seen
	if err := h.Handle(&s, env); err != nil || s.serial != "WD-1" || s.host != "nas1" {
		t.Fatalf("Handle: %v, saw %+v", err, s)
	}
	s = seen{}
	if err := h.HandleMsg(&s, msg); err != nil || s.serial != "WD-1" || s.host != "nas1" {
		t.Fatalf("HandleMsg: %v, saw %+v", err, s)
	}
	if _, ok := hs.Lookup("arc"); ok {
		t.Error("Lookup finds a kind nobody registered")
	}
	for subject, want := range map[string]Kind{
		"zwatch.v1.nas1.smart.WD-1":     Smart,
		"zwatch.3.v1.nas1.zpool.status": ZpoolStatus, // a partition's subject
		"zwatch.v1.nas1.arc":            nil,
		"zwatch.v1.nas1.smartish":       nil,
	} {
		h, host, ok := hs.ForSubject(subject)
		if ok != (want != nil) || h.Kind() != want || (ok && host != "nas1") {
			t.Errorf("ForSubject(%s) = %v %q %v, want %v", subject, h.Kind(), host, ok, want)
		}
	}
}

func TestHandlerErrors(t *testing.T) {
	var hs Handlers[*seen]
	mine := errors.New("mine")
	On(&hs, ZpoolStatus, func(*seen, bus.Envelope, *StatusData) error { return mine })
	h, _ := hs.Lookup(ZpoolStatus.Name())
	env, msg := envelope(t, ZpoolStatus, StatusData{})
	if err := h.Handle(&seen{}, env); !errors.Is(err, mine) {
		t.Errorf("Handle returns %v, want the func's own error", err)
	}
	env.Data = []byte(`{"pools": 3}`)
	err := h.Handle(&seen{}, env)
	if err == nil || !strings.HasPrefix(err.Error(), "decode zwatch.v1.zpool.status from nas1: ") {
		t.Errorf("Handle of a bad payload: %v", err)
	}
	_, other := envelope(t, Smart, smart.Report{})
	if err := h.HandleMsg(&seen{}, other); err == nil || err.Error() != `schema "zwatch.v1.smart", want "zwatch.v1.zpool.status"` {
		t.Errorf("HandleMsg of another kind: %v", err)
	}
	if err := h.HandleMsg(&seen{}, msg[:len(msg)-2]); err == nil || !strings.HasPrefix(err.Error(), "decode zpool.status fact: ") {
		t.Errorf("HandleMsg of a cut message: %v", err)
	}
}

// A handler without a func knows its kind and reads nothing: its facts
// are proof of life, and a payload it cannot read is no error.
func TestHandlerWithoutFunc(t *testing.T) {
	env, msg := envelope(t, Heartbeat, HeartbeatData{})
	env.Data = []byte(`"not a heartbeat"`)
	for _, h := range []Handler[*seen]{Unread[*seen](Heartbeat), HandlerOf[HeartbeatData, *seen](Heartbeat, nil)} {
		if h.Kind() != Kind(Heartbeat) || h.Handle(&seen{}, env) != nil || h.HandleMsg(&seen{}, msg) != nil {
			t.Error("a handler without a func reads its facts")
		}
	}
	var zero Handler[*seen]
	if zero.Kind() != nil || zero.Handle(&seen{}, env) != nil {
		t.Error("the zero handler has a kind or reads")
	}
}

// smartPart is the part of a SMART report a reader may keep.
type smartPart struct {
	Serial     string `json:"serial"`
	Attributes []struct {
		ID  int    `json:"id"`
		Raw uint64 `json:"raw"`
	} `json:"attributes"`
	NVMe *struct {
		MediaErrors uint64 `json:"media_errors"`
	} `json:"nvme"`
}

func TestOnPartReadsOnlyThePart(t *testing.T) {
	var hs Handlers[*seen]
	OnPart(&hs, Smart, func(s *seen, _ bus.Envelope, p *smartPart) error {
		s.serial = p.Serial
		return nil
	})
	h, _ := hs.Lookup(Smart.Name())
	_, msg := envelope(t, Smart, smart.Report{Serial: "WD-2", Model: "x"})
	var s seen
	if err := h.HandleMsg(&s, msg); err != nil || s.serial != "WD-2" {
		t.Fatalf("HandleMsg: %v, saw %+v", err, s)
	}
	if err := CheckPart[smartPart, smart.Report](); err != nil {
		t.Error(err)
	}
}

func TestCheckPartFindsWhatThePayloadLacks(t *testing.T) {
	type renamed struct {
		Serial string `json:"serial_number"`
	}
	type retyped struct {
		Attributes []struct {
			Raw string `json:"raw"`
		} `json:"attributes"`
	}
	type skipsAnObject struct {
		Pools []struct {
			Vdevs struct{} `json:"vdevs"`
		} `json:"pools"`
	}
	type skipsAList struct {
		Pools struct{} `json:"pools"`
	}
	for name, err := range map[string]error{
		"renamed":                            CheckPart[renamed, smart.Report](),
		"retyped":                            CheckPart[retyped, smart.Report](),
		"a list skipped as an object":        CheckPart[skipsAList, StatusData](),
		"a nested list skipped as an object": CheckPart[skipsAnObject, StatusData](),
	} {
		if err == nil {
			t.Errorf("%s: CheckPart passes", name)
		}
	}
	type embedded struct {
		EventData
		Class string `json:"class"`
	}
	if err := CheckPart[embedded, EventData](); err != nil {
		t.Errorf("embedded: %v", err)
	}
}
