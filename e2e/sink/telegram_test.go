package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
	"github.com/zwatch/zwatch/notifiers/telegram"
)

// The fake serves zwatch's own Telegram sender end to end: a page with
// buttons, a tap through /tg-tap, the answer, the edited buttons.
func TestTelegramFakeWithZwatchsSender(t *testing.T) {
	tg, err := newTGFake(filepath.Join(t.TempDir(), "tg.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/tg/", tg.bot)
	mux.HandleFunc("/tg-tap", tg.tap)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	s := telegram.New(telegram.Config{Token: config.Secret{Value: "123456:ABC-e2e"}, ChatIDs: []string{"42"}, APIURL: srv.URL + "/tg",
		AnswerUsers: []string{"123456789"}}, channel.Env{HTTP: srv.Client()})
	if !s.EnableAnswers(answer.Key([]byte("0123456789abcdef0123456789abcdef")), "phone") {
		t.Fatal("answers not enabled")
	}
	m := channel.Message{Summary: "[WARNING] vault", Text: "[WARNING] vault can lose 1 more disk", Severity: alert.Warning,
		Notification: alert.Notification{Alerts: []alert.Alert{{Name: "VdevState", Incident: "3f2a9c1e", Severity: alert.Warning, State: alert.Firing}}}}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	do := func(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, act.Verb+" "+act.Incident+" "+by+" "+source)
		return answer.Outcome{Host: "e2e"}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Answers(ctx, do, slog.New(slog.DiscardHandler)); close(done) }()
	defer func() { cancel(); <-done }()
	resp, err := http.Get(srv.URL + "/tg-tap?label=Acknowledge&contains=vault")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("tap: %d %s", resp.StatusCode, b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "ack 3f2a9c1e @alice telegram:phone" {
		t.Fatalf("answers %q", got)
	}
	time.Sleep(200 * time.Millisecond)
	tg.mu.Lock()
	defer tg.mu.Unlock()
	log, _ := readFile(tg.log.Name())
	for _, want := range []string{`"method":"sendMessage"`, `"method":"tap-delivered"`, `"method":"answerCallbackQuery"`, `"method":"editMessageReplyMarkup"`, "Acknowledged by @alice"} {
		if !strings.Contains(log, want) {
			t.Errorf("tg.jsonl lacks %s:\n%s", want, log)
		}
	}
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
