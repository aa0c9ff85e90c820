package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/answer"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// A replacement from the status page (actions.replace): the incident
// card's Replace link leads to the answer page like Acknowledge's; its POST
// asks (zwatch replace's checks, tools/replace/remote) and shows the
// question with a form per disk; a form's POST, with the new disk's serial
// typed in, is the confirmation, and uses the link, once. Only for a
// logged-in user: the answer route exists only with http.users.

// askTimeout bounds the question's checks.
const askTimeout = 25 * time.Second

// replaceChoice is one disk the question offers.
type replaceChoice struct {
	Label, Offer, Word, FormToken string
}

// replaceFormToken binds a disk's form to the link, the offer and the word
// to type, so that none of them can be swapped.
func replaceFormToken(k answer.Key, token, offer, word string) string {
	return k.FormToken(token + "|" + offer + "|" + word)
}

// replaceLink adds a card's Replace link when its disk may be replaced.
func (s *server) replaceLink(in *incidentView, host string) {
	a := s.o.Answers
	if a.ReplaceHost == "" {
		return
	}
	disk := answer.ReplaceOffered(alert.Notification{Status: alert.Firing, Alerts: in.Alerts}, a.ReplaceHost)
	if disk == "" {
		return
	}
	l, err := answer.NewLink(answer.Action{Verb: answer.Replace, Incident: in.ID}, host, time.Now())
	if err != nil {
		return
	}
	in.Links = append(in.Links, channel.Link{Label: "Replace " + disk + "…", URL: "/answer?t=" + a.Key.SignLink(l)})
}

// askReplace answers the Replace link's POST: the question, and a form per
// disk that qualifies. It writes nothing, and leaves the link unused.
func (s *server) askReplace(_ context.Context, w http.ResponseWriter, r *http.Request, token string, l answer.Link, p answerPage) {
	a := s.o.Answers
	// The checks run zpool status and probe every disk: longer than a
	// read of the bus may take, within the response's own 30 s.
	ctx, cancel := context.WithTimeout(r.Context(), askTimeout)
	defer cancel()
	user, _, _ := r.BasicAuth()
	p.Title = "Replace the disk of incident " + l.Incident
	out, err := a.Do(ctx, l.Action, user, "page:"+user)
	switch {
	case errors.Is(err, answer.ErrGone):
		p.Done = "Incident " + l.Incident + " is over: nothing to replace."
		s.renderAnswer(w, r, http.StatusOK, p)
		return
	case err != nil:
		s.log.Warn("status page: a replacement could not be asked about", "incident", l.Incident, "by", user, "err", err)
		p.Error = "zwatch could not check the disks: " + err.Error()
		s.renderAnswer(w, r, http.StatusServiceUnavailable, p)
		return
	}
	p.Question, p.Token = out.Text, token
	for _, o := range out.Ask {
		if o.Action.Verb == answer.Confirm && o.Word != "" { // Cancel is the link back to the page
			p.Choices = append(p.Choices, replaceChoice{Label: o.Label, Offer: o.Action.Incident, Word: o.Word,
				FormToken: replaceFormToken(a.Key, token, o.Action.Incident, o.Word)})
		}
	}
	s.renderAnswer(w, r, http.StatusOK, p)
}

// confirmReplace carries out a disk's form: this page's form, the serial
// typed exactly, the link not used before; then the replacement starts, for
// the logged-in user.
func (s *server) confirmReplace(w http.ResponseWriter, r *http.Request, token string, p answerPage) {
	a := s.o.Answers
	offer, word := r.PostForm.Get("offer"), r.PostForm.Get("word")
	p.Title = "Replace a disk"
	if !a.Key.CheckFormToken(token+"|"+offer+"|"+word, r.PostForm.Get("form")) {
		p.Error = "refused: not a form this page sent; open the link again"
		s.renderAnswer(w, r, http.StatusForbidden, p)
		return
	}
	l, err := a.Key.VerifyLink(token, time.Now())
	if err != nil || l.Verb != answer.Replace {
		p.Error = "refused: " + errors.Join(err, answer.ErrLinkBad).Error()
		s.renderAnswer(w, r, linkStatus(err), p)
		return
	}
	p.Host, p.Incident = l.Host, l.Incident
	if typed := strings.TrimSpace(r.PostForm.Get("confirm")); typed != word {
		p.Error = "Not run: type " + word + " exactly (the new disk's serial) to confirm that everything on it may be erased."
		s.renderAnswer(w, r, http.StatusBadRequest, p)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), askTimeout) // the checks run again
	defer cancel()
	if !s.useLink(ctx, w, r, l, p) {
		return
	}
	user, _, _ := r.BasicAuth()
	out, err := a.Do(ctx, answer.Action{Verb: answer.Confirm, Incident: offer}, user, "page:"+user)
	switch {
	case errors.Is(err, answer.ErrClosed):
		p.Error = err.Error()
		s.renderAnswer(w, r, http.StatusGone, p)
	case err != nil:
		s.log.Warn("status page: a replacement was not started", "incident", l.Incident, "by", user, "err", err)
		p.Error = "not started: " + err.Error()
		s.renderAnswer(w, r, http.StatusServiceUnavailable, p)
	case out.Progress == nil:
		p.Error = out.Text
		s.renderAnswer(w, r, http.StatusConflict, p)
	default:
		s.log.Info("status page: replacement confirmed", "incident", l.Incident, "by", user)
		p.Done = out.Text + ". The pool's card on the status page shows the resilver; its end comes as a notification."
		s.renderAnswer(w, r, http.StatusOK, p)
	}
}
