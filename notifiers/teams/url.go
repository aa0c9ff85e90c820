package teams

import (
	"net/url"
	"strings"

	"github.com/zwatch/zwatch/notifiers/channel"
)

// URLForm reads a Workflows webhook as a URL in two ways. The newer
// shoutrrr's, the workflow's URL percent-encoded in host
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/teams/index.md):
//
//	teams://?host=https%3A%2F%2Fprod-00.westus.logic.azure.com%3A443%2Fworkflows%2F…%26sig%3D…
//
// and zwatch's, the workflow's URL as Teams shows it with teams+ in front,
// every query parameter kept:
//
//	teams+https://prod-00.westus.logic.azure.com:443/workflows/…/invoke?api-version=2016-06-01&sp=…&sv=1.0&sig=…
//
// shoutrrr v0.8's teams://group@tenant/altId/groupOwner
// (https://containrrr.dev/shoutrrr/v0.8/services/teams/) addresses an
// Office 365 connector, which Microsoft retired: it is refused with how to
// make the workflow instead.
func (Config) URLForm() channel.URLForm[Config] {
	const card = "zwatch lays out each card itself, titled with its alert and coloured by severity: remove it"
	return channel.URLForm[Config]{
		Schemes: []string{"teams", "teams+https"},
		Refused: map[string]string{"title": card, "color": card},
		Decode:  fromURL,
	}
}

const writeWorkflow = "write teams://?host=<the workflow's URL, percent-encoded> or teams+https://<the workflow's URL without https://>"

func fromURL(u *channel.URL) (Config, error) {
	if u.Scheme() == "teams+https" {
		return fromWorkflowURL(u)
	}
	var c Config
	user, password, hasUser := u.User()
	segs := u.Segments()
	for _, s := range append(segs, user, password) {
		u.Secret(s)
	}
	if hasUser || len(segs) > 0 {
		part := "path"
		if hasUser {
			part = "user"
		}
		return c, channel.Errorf(part, "is shoutrrr's Office 365 connector form (teams://group@tenant/altId/groupOwner), and Microsoft retired those connectors: %s; then %s", createWorkflow, writeWorkflow)
	}
	if u.HostPort() != "" {
		return c, channel.Errorf("host", "a teams:// URL has none: the workflow's whole URL goes in ?host=, percent-encoded; or %s", writeWorkflow)
	}
	v, ok := u.Param("host")
	if !ok || strings.TrimSpace(v) == "" {
		return c, channel.Errorf("query parameter host", "empty: %s; %s", createWorkflow, writeWorkflow)
	}
	c.WebhookURL = u.Secret(v)
	w, err := url.Parse(v)
	switch {
	case err != nil || w.Host == "" || w.Scheme != "https" && w.Scheme != "http":
		return c, channel.Errorf("query parameter host", "not the workflow's https://… URL: copy it whole from the workflow and percent-encode it, or %s", writeWorkflow)
	case isConnector(w):
		return c, channel.Errorf("query parameter host", "is an Office 365 connector webhook, which Microsoft has retired: %s; then %s", createWorkflow, writeWorkflow)
	case w.RawQuery != "" && !w.Query().Has("sig"):
		// The workflow's URL pasted unencoded: its own parameters after the
		// first became the teams:// URL's.
		return c, channel.Errorf("query parameter host", "holds the workflow's URL unencoded, so its sig= and the parameters before it were cut off: percent-encode it (: as %%3A, / as %%2F, ? as %%3F, & as %%26, = as %%3D), or %s", writeWorkflow)
	}
	return c, nil
}

// fromWorkflowURL reads teams+https://: the workflow's URL after teams+.
func fromWorkflowURL(u *channel.URL) (Config, error) {
	var c Config
	if _, password, ok := u.User(); ok {
		u.Secret(password)
		return c, channel.Errorf("user", "a workflow's URL has none: copy it from the workflow as it is and write teams+ in front")
	}
	if u.Host() == "" {
		return c, channel.Errorf("host", "empty: write the workflow's URL with teams+ in front, teams+https://….environment.api.powerplatform.com/…")
	}
	if _, err := u.Port(); err != nil {
		return c, err
	}
	var query []string
	for _, p := range u.Rest() {
		query = append(query, p.Raw)
		if strings.EqualFold(p.Key, "sig") {
			u.Secret(p.Value)
		}
	}
	raw := "https://" + u.HostPort() + u.EscapedPath()
	if len(query) > 0 {
		raw += "?" + strings.Join(query, "&")
	}
	c.WebhookURL = u.Secret(raw)
	if w, err := url.Parse(raw); err == nil && isConnector(w) {
		return c, channel.Errorf("host", "is an Office 365 connector webhook, which Microsoft has retired: %s; then write its URL with teams+ in front", createWorkflow)
	}
	return c, nil
}
