package telegram

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/notifiers/answer"
)

// okTransport answers every Bot API call with ok, without a network.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":true,"result":{"message_id":1}}`)), Request: r}, nil
}

// FuzzUpdate: whatever getUpdates answers, the reader neither panics nor
// acts on anything but data zwatch signed, tapped by a listed user.
func FuzzUpdate(f *testing.F) {
	seed, err := os.ReadFile("testdata/getUpdates-callback_query.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	key := answer.Key(strings.Repeat("k", 32))
	for _, v := range []string{answer.Ack, answer.Replace, answer.Confirm} {
		f.Add([]byte(strings.Replace(string(seed), `"data": "`, `"data": "`+key.Sign(answer.Action{Verb: v, Incident: "3f2a9c1e"})+`x`, 1)))
	}
	f.Add([]byte(`{"ok":true,"result":[{"update_id":1,"callback_query":{"id":"1","from":{"id":123456789},"data":"` + key.Sign(answer.Action{Verb: answer.Ack, Incident: "3f2a9c1e"}) + `"}}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r struct {
			Result []update `json:"result"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		s := &Sender{api: "http://bot.invalid", token: "1:A", client: &http.Client{Transport: okTransport{}},
			answerers: map[int64]bool{123456789: true}, key: key, name: "phone"}
		for _, u := range r.Result {
			if u.CallbackQuery == nil {
				continue
			}
			cq := u.CallbackQuery
			s.handle(context.Background(), cq, func(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
				if cq.From.ID != 123456789 {
					t.Fatalf("acted for user %d", cq.From.ID)
				}
				if got, err := key.Verify(cq.Data); err != nil || got != act {
					t.Fatalf("acted on %+v for data %q", act, cq.Data)
				}
				return answer.Outcome{}, nil
			}, slog.New(slog.DiscardHandler))
		}
	})
}
