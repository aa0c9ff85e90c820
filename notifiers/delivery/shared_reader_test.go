package delivery_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/delivery"
	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// Two channels of one Telegram bot (two chats) on one machine get one
// getUpdates reader: two would make Telegram refuse one (409) and split
// the taps between them.
func TestTwoChannelsOfOneBotPollOnce(t *testing.T) {
	var mu sync.Mutex
	inFlight, most, polls := 0, 0, 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasSuffix(r.URL.Path, "/getUpdates") {
			_, _ = io.WriteString(w, `{"ok":true,"result":true}`)
			return
		}
		mu.Lock()
		inFlight++
		polls++
		most = max(most, inFlight)
		mu.Unlock()
		select { // a long poll with nothing new
		case <-r.Context().Done():
		case <-time.After(200 * time.Millisecond):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		_, _ = io.WriteString(w, `{"ok":true,"result":[]}`)
	}))
	defer api.Close()
	tg := func(name, chat string) config.ChannelConfig {
		return config.ChannelConfig{Name: name, Type: telegram.Service.Name(), Settings: telegram.Config{
			APIURL: api.URL, Token: config.Secret{Value: "123456:ABC-DEF"}, ChatIDs: []string{chat}, AnswerUsers: []string{"123456789"}}}
	}
	b := notifytest.OpenBus(t, t.TempDir())
	defer b.Close()
	do := func(context.Context, answer.Action, string, string) (answer.Outcome, error) {
		return answer.Outcome{}, nil
	}
	stop := notifytest.RunNotifiers(t, b, notifytest.NotifyConfig(tg("alice", "123456789"), tg("bob", "987654321")),
		delivery.Options{Answers: &delivery.Answers{Key: answer.Key(strings.Repeat("k", 32)), Do: do}})
	time.Sleep(1500 * time.Millisecond)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if polls < 3 || most != 1 {
		t.Errorf("%d polls, at most %d at once: want one reader for the bot", polls, most)
	}
}
