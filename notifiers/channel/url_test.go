package channel

import (
	"strings"
	"testing"

	"github.com/zwatch/zwatch/config"
)

// probe is a channel type whose URL form hands back what it read, to test
// the URL plumbing apart from any service.
type probe struct {
	User, Password, Host, Base, Last string
	Port                             int
	Token                            config.Secret
	Flag, FlagSet                    bool
	Rest                             []QueryParam
}

func (probe) Validate(string, *config.Errors)       {}
func (probe) HasLiteralSecret() bool                { return false }
func (probe) NewSender(Env) (Sender, error)         { return nil, nil }
func (probe) URLForm() URLForm[probe]               { return probeForm }
func decodeProbe(raw string) (probe, string, error) { return decode(probeService, raw) }

var (
	probeForm = URLForm[probe]{
		Schemes: []string{"probe", "probe+x"},
		Refused: map[string]string{"title": "not here: remove it"},
		Decode: func(u *URL) (probe, error) {
			var p probe
			var err error
			p.User, p.Password, _ = u.User()
			p.Host = u.Host()
			if p.Port, err = u.Port(); err != nil {
				return p, err
			}
			p.Base, p.Last, _ = u.SplitPath()
			if p.Password != "" {
				p.Token = u.Secret(p.Password)
			}
			if v, ok := u.Param("key", "alias"); ok {
				u.Secret(v)
			}
			if p.Flag, p.FlagSet, err = u.Bool("flag"); err != nil {
				return p, err
			}
			if _, ok := u.Param("pass"); ok {
				p.Rest = u.Rest()
			}
			return p, nil
		},
	}
	probeService = Define[probe]("probe")
)

func decode(svc Service, raw string) (probe, string, error) {
	var errs config.Errors
	s, masked := svc.DecodeURL(config.Secret{Value: raw, Literal: true}, "notify.channels[0].url", &errs)
	if len(errs) > 0 {
		return probe{}, masked, errs
	}
	return s.(probe), masked, nil
}

func TestURLParts(t *testing.T) {
	if got := probeService.Schemes(); len(got) != 2 || got[1] != "probe+x" {
		t.Errorf("schemes %v", got)
	}
	p, masked, err := decodeProbe("probe://me:pa%2Fss-w0rd@Host.example:8080/a%20b/c/last%2Fone/?key=K3y-s3cret&Flag=Y&pass=1&x=2&x=3")
	if err != nil {
		t.Fatal(err)
	}
	if p.User != "me" || p.Password != "pa/ss-w0rd" || p.Host != "Host.example" || p.Port != 8080 || p.Base != "/a%20b/c" || p.Last != "last/one" ||
		!p.Flag || !p.FlagSet || p.Token.Value != "pa/ss-w0rd" || !p.Token.Literal {
		t.Errorf("%+v", p)
	}
	if len(p.Rest) != 2 || p.Rest[0] != (QueryParam{Key: "x", Value: "2", Raw: "x=2"}) {
		t.Errorf("rest %v", p.Rest)
	}
	if want := "probe://***@Host.example:8080/a%20b/c/last%2Fone/?key=***&Flag=Y&pass=1&x=2&x=3"; masked != want {
		t.Errorf("masked %q\nwant   %q", masked, want)
	}
	// A long secret written again elsewhere is masked there too.
	if _, masked, _ := decodeProbe("probe://:abcdefghij@h/abcdefghij/x?note=abcdefghij"); strings.Contains(masked, "abcdefghij") {
		t.Errorf("masked %q", masked)
	}
}

func TestURLErrorsNameThePartAndHideSecrets(t *testing.T) {
	for raw, want := range map[string]string{
		"probe://u:s3cretpass@h:99999/":         `notify.channels[0].url = "probe://***@h:99999": port: "99999" is not a port: use 1-65535`,
		"probe://u:s3cret/pass@h/":              `notify.channels[0].url = "probe://…": port: not a number after the host's colon`,
		"probe://u:s3cretpass@h/x#s3cretpass":   `fragment: a # ends the URL`,
		"probe://u:s3cretpass@h/%zz":            `url: has a % not followed by two hex digits`,
		"probe://u:s3cretpass@h/?flag=maybe":    `notify.channels[0].url = "probe://***@h/…": query parameter flag: "maybe" is not yes or no`,
		"probe://u:s3cretpass@h/?title=x":       `query parameter title: not here: remove it`,
		"probe://u:s3cretpass@h/?falg=1":        `query parameter falg: not read by probe URLs: did you mean "flag"? (they take alias, flag, key, pass)`,
		"probe://u:s3cretpass@h/?key=1&KEY=2":   `query parameter KEY: given twice: keep one`,
		"probe://u:s3cretpass@h/?key=1&alias=2": `query parameter alias: given twice, also as key: keep one`,
		// A refused parameter is told after decoding, which knows the
		// host for a secret here.
		"probe://:s3cretpass@s3cretpass/?title=x": `notify.channels[0].url = "probe://***@***/…": query parameter title`,
		"probe://u:s3cretpass@h/?a=%zz":           `query: a parameter is not key=value`,
		"probe://u:s3cretpass@[::1/":              `host: is not a host name`,
		"probe://u:s3cretpass@h\n/":               `url: has a control character`,
		"probe://s3cret%pass@h/":                  `has a % not followed by two hex digits`,
	} {
		_, _, err := decodeProbe(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n  got  %v\n  want %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error shows the secret: %v", raw, err)
		}
	}
}

func TestTypeWithoutURLForm(t *testing.T) {
	svc := Define[plainSettings]("plain")
	if len(svc.Schemes()) != 0 {
		t.Errorf("schemes %v", svc.Schemes())
	}
	var errs config.Errors
	if s, _ := svc.DecodeURL(config.Secret{Value: "plain://x"}, "p", &errs); s != nil || len(errs) != 1 || !strings.Contains(errs[0].Problem, "cannot be written as a URL") {
		t.Errorf("%v %v", s, errs)
	}
}

type plainSettings struct {
	URL string `yaml:"url"`
}

func (plainSettings) Validate(string, *config.Errors) {}
func (plainSettings) HasLiteralSecret() bool          { return false }
func (plainSettings) NewSender(Env) (Sender, error)   { return nil, nil }

func TestFixedPriority(t *testing.T) {
	four, one := 4, 1
	for _, tc := range []struct {
		derived  int
		fixed    *int
		resolved bool
		want     int
	}{{5, nil, false, 5}, {5, &four, false, 4}, {3, &four, false, 4}, {2, &four, true, 2}, {2, &one, true, 1}} {
		if got := Fixed(tc.derived, tc.fixed, tc.resolved); got != tc.want {
			t.Errorf("Fixed(%d, %v, %v) = %d, want %d", tc.derived, tc.fixed, tc.resolved, got, tc.want)
		}
	}
}
