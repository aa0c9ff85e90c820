package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
)

// Answer links (answer.Link): a notification carries links to
// /answer?t=TOKEN. Opening one (a GET, which a chat app's link preview
// makes too) only shows what it would do and a button; the button's POST,
// with a form token only this page can make, acts, once, for the
// logged-in user. The route exists only with http.users (NewHandler).

// AnswerOptions lets the page act on answer links.
type AnswerOptions struct {
	Key answer.Key
	// Do carries the answer out (incident.Answer through the bus).
	Do answer.Func
	// Use records a link's use, once, and fails on a second one
	// (incident.UseLink); Used tells whether it was used.
	Use  func(ctx context.Context, nonce string, expires time.Time) error
	Used func(ctx context.Context, nonce string) (bool, error)
	// ErrUsed is what Use returns for a link used before.
	ErrUsed error
	// ReplaceHost, when set (actions.replace), lets the incident cards of
	// this host's replaceable disks offer the replacement (replace.go).
	ReplaceHost string
}

// maxAnswerForm bounds the POST body: two tokens.
const maxAnswerForm = 4 << 10

type answerPage struct {
	Title, Host, Incident, What, Button, Expires string
	Token, FormToken                             string
	Alerts                                       []alert.Alert
	Confirm                                      bool
	Error, Done                                  string
	// Question and Choices are a replacement's question (replace.go).
	Question string
	Choices  []replaceChoice
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.confirmAnswer(w, r)
	case http.MethodPost:
		s.doAnswer(w, r)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeError(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here")
	}
}

// confirmAnswer shows what the link asks for and the button; it changes
// nothing.
func (s *server) confirmAnswer(w http.ResponseWriter, r *http.Request) {
	a := s.o.Answers
	token := r.URL.Query().Get("t")
	l, err := a.Key.VerifyLink(token, time.Now())
	p := answerPage{Title: "Answer a page"}
	if err != nil {
		p.Error = err.Error()
		s.renderAnswer(w, r, linkStatus(err), p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	p.Host, p.Incident, p.Expires = l.Host, l.Incident, stamp(l.Expires)
	if used, err := a.Used(ctx, l.Nonce); err == nil && used {
		p.Error = a.ErrUsed.Error()
		s.renderAnswer(w, r, http.StatusGone, p)
		return
	}
	p.Confirm, p.Token, p.FormToken = true, token, a.Key.FormToken(token)
	p.Title, p.Button, p.What = verbText(l.Verb)
	if h, err := s.o.View.Host(ctx, l.Host); err == nil {
		for _, al := range h.Alerts {
			if al.Incident == l.Incident && al.State == alert.Firing {
				p.Alerts = append(p.Alerts, al)
			}
		}
	}
	s.renderAnswer(w, r, http.StatusOK, p)
}

// doAnswer acts on a confirmed link: same origin, this page's form token,
// a good link not used before; then the answer, for the logged-in user.
func (s *server) doAnswer(w http.ResponseWriter, r *http.Request) {
	a := s.o.Answers
	p := answerPage{Title: "Answer a page"}
	if !sameOrigin(r) {
		p.Error = "refused: the request came from another site"
		s.renderAnswer(w, r, http.StatusForbidden, p)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAnswerForm)
	if err := r.ParseForm(); err != nil {
		p.Error = "refused: not a form this page sent"
		s.renderAnswer(w, r, http.StatusBadRequest, p)
		return
	}
	token := r.PostForm.Get("t")
	if r.PostForm.Get("offer") != "" {
		s.confirmReplace(w, r, token, p)
		return
	}
	if !a.Key.CheckFormToken(token, r.PostForm.Get("form")) {
		p.Error = "refused: not a form this page sent; open the link again"
		s.renderAnswer(w, r, http.StatusForbidden, p)
		return
	}
	l, err := a.Key.VerifyLink(token, time.Now())
	if err != nil {
		p.Error = err.Error()
		s.renderAnswer(w, r, linkStatus(err), p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	p.Host, p.Incident = l.Host, l.Incident
	if l.Verb == answer.Replace {
		s.askReplace(ctx, w, r, token, l, p)
		return
	}
	if !s.useLink(ctx, w, r, l, p) {
		return
	}
	user, _, _ := r.BasicAuth()
	out, err := a.Do(ctx, l.Action, user, "page:"+user)
	switch {
	case errors.Is(err, answer.ErrGone):
		p.Done = "Incident " + l.Incident + " is over: nothing to answer."
	case err != nil:
		s.log.Warn("status page: an answer link was not carried out", "incident", l.Incident, "verb", l.Verb, "by", user, "err", err)
		p.Error = "not carried out: " + err.Error() + "; answer with zwatch " + l.Verb + " " + l.Incident + " on the box"
		s.renderAnswer(w, r, http.StatusServiceUnavailable, p)
		return
	case l.Verb == answer.Snooze:
		p.Done = "Incident " + l.Incident + " snoozed until " + stamp(out.Until) + " by " + user + "."
	default:
		p.Done = "Incident " + l.Incident + " acknowledged by " + user + ": its repeats stop; a change for the worse still pages."
	}
	s.log.Info("status page: answer link used", "incident", l.Incident, "verb", l.Verb, "by", user, "host", out.Host)
	s.renderAnswer(w, r, http.StatusOK, p)
}

// useLink records the use of link l, once; false, with the page rendered,
// when it was used before or cannot be recorded.
func (s *server) useLink(ctx context.Context, w http.ResponseWriter, r *http.Request, l answer.Link, p answerPage) bool {
	a := s.o.Answers
	err := a.Use(ctx, l.Nonce, l.Expires)
	if err == nil {
		return true
	}
	p.Error = err.Error()
	code := http.StatusServiceUnavailable
	if errors.Is(err, a.ErrUsed) {
		code = http.StatusGone
	}
	s.renderAnswer(w, r, code, p)
	return false
}

// sameOrigin refuses a POST another site made a logged-in browser send:
// browsers say so in Sec-Fetch-Site, older ones in Origin.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return origin == "" // no browser sent it, or a privacy-stripped one
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(hostOnly(u.Host), hostOnly(r.Host))
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func linkStatus(err error) int {
	if errors.Is(err, answer.ErrLinkExpired) {
		return http.StatusGone
	}
	return http.StatusBadRequest
}

func verbText(verb string) (title, button, what string) {
	if verb == answer.Replace {
		return "Replace the disk of this incident?", "Check the disks",
			"zwatch replace's checks run on the disks plugged in now, and you are asked once more, with the exact command and the disk it erases: nothing is written before that."
	}
	if verb == answer.Snooze {
		return "Snooze this incident for 24 h?", "Snooze for 24 h", "Snoozing silences the incident for a day; a rise in severity still pages."
	}
	return "Acknowledge this incident?", "Acknowledge", "Acknowledging stops its repeats; a change for the worse still pages, and its resolved notice still comes."
}

func (s *server) renderAnswer(w http.ResponseWriter, r *http.Request, code int, p answerPage) {
	var b strings.Builder
	if err := s.pages.page.ExecuteTemplate(&b, "answer.html", p); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(b.String()))
	}
}
