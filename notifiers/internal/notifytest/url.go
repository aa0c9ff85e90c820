package notifytest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
	"github.com/zwatch/zwatch/model/alert"
	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLCase is one channel URL and what its type must make of it.
type URLCase struct {
	URL string
	// Want is the settings a valid URL decodes to; nil for an invalid one.
	Want config.ChannelSettings
	// Masked is how check-config shows a valid URL.
	Masked string
	// Err is in the error an invalid URL gets: the part that is wrong and
	// the fix.
	Err string
}

// DecodeURL decodes raw, written literally in the config file, with svc's
// URL form as config does for a channel's url.
func DecodeURL(svc channel.Service, raw string) (config.ChannelSettings, string, config.Errors) {
	var errs config.Errors
	s, masked := svc.DecodeURL(config.Secret{Value: raw, Literal: true}, "notify.channels[0].url", &errs)
	return s, masked, errs
}

// CheckURLs runs the cases against svc's URL form: a valid URL decodes to
// exactly Want, which validates, and masks to Masked; an invalid one gets
// an error holding Err. No secret may appear in a masked URL or an error.
func CheckURLs(t *testing.T, svc channel.Service, secrets []string, cases []URLCase) {
	t.Helper()
	for _, tc := range cases {
		s, masked, errs := DecodeURL(svc, tc.URL)
		shown := masked + "\n" + errs.Error()
		for _, sec := range secrets {
			if strings.Contains(shown, sec) {
				t.Errorf("%s: shows the secret %q:\n%s", tc.URL, sec, shown)
			}
		}
		if tc.Want == nil {
			if len(errs) == 0 || !strings.Contains(errs.Error(), tc.Err) {
				t.Errorf("%s:\n  got  %v (settings %+v)\n  want %q", tc.URL, errs, s, tc.Err)
			}
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%s: %v", tc.URL, errs)
			continue
		}
		if !reflect.DeepEqual(s, tc.Want) {
			t.Errorf("%s:\n  got  %#v\n  want %#v", tc.URL, s, tc.Want)
		}
		if masked != tc.Masked {
			t.Errorf("%s: masked %q, want %q", tc.URL, masked, tc.Masked)
		}
		var verrs config.Errors
		s.Validate("notify.channels[0]", &verrs)
		if len(verrs) > 0 {
			t.Errorf("%s: decoded settings do not validate: %v", tc.URL, verrs)
		}
	}
}

// Lit is a secret written in the config file (as a URL's parts are).
func Lit(v string) config.Secret { return config.Secret{Value: v, Literal: true} }

// Int points at n, for optional settings such as a fixed priority.
func Int(n int) *int { return &n }

// Resolved is n's resolved notice: the same alerts, ended.
func Resolved(n alert.Notification, id string) alert.Notification {
	n.ID, n.Status = id, alert.Resolved
	n.Alerts = append([]alert.Alert(nil), n.Alerts...)
	for i := range n.Alerts {
		n.Alerts[i].State = alert.Resolved
	}
	return n
}
