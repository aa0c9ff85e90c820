// Package answertest runs a channel's answer reader in a test and records
// the answers it carries out.
package answertest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zwatch/zwatch/notifiers/answer"
)

// Recorder is an answer.Func that records each answer as
// "VERB INCIDENT BY SOURCE" and answers that it snoozed for 24 h.
type Recorder struct {
	mu  sync.Mutex
	got []string
}

// Do records one answer.
func (r *Recorder) Do(_ context.Context, act answer.Action, by, source string) (answer.Outcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, act.Verb+" "+act.Incident+" "+by+" "+source)
	return answer.Outcome{Host: "nas1", Until: time.Now().Add(answer.SnoozeFor)}, nil
}

// Got is what was answered, in order.
func (r *Recorder) Got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Run runs the reader answers with r until done holds (or 5 s pass, when
// the test's own checks say what is missing), then stops it and waits for
// it to return.
func Run(t *testing.T, answers func(context.Context, answer.Func, *slog.Logger) error, r *Recorder, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- answers(ctx, r.Do, slog.New(slog.DiscardHandler)) }()
	for deadline := time.Now().Add(5 * time.Second); !done() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-stopped; err != nil {
		t.Errorf("the answer reader: %v", err)
	}
}
