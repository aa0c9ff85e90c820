package teams_test

import (
	"net/url"
	"testing"

	"github.com/zwatch/zwatch/notifiers/internal/notifytest"
	"github.com/zwatch/zwatch/notifiers/teams"
)

// teams://?host= is the newer shoutrrr's Workflows form
// (https://github.com/nicholas-fedor/shoutrrr/blob/main/docs/services/chat/teams/index.md:
// "teams://?host=<Power Automate workflow URL>", percent-encoded);
// teams+https:// is zwatch's, the workflow's URL with teams+ in front.
// shoutrrr v0.8's teams://group@tenant/altId/groupOwner
// (https://containrrr.dev/shoutrrr/v0.8/services/teams/) is an Office 365
// connector's, retired
// (https://devblogs.microsoft.com/microsoft365dev/retirement-of-office-365-connectors-within-microsoft-teams/).
func TestTeamsURL(t *testing.T) {
	const sig = "SiGnAtUrE-9xLm3QvT0kZ"
	logic := "prod-00.westus.logic.azure.com:443/workflows/abc123/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + sig
	platform := "default1a2b.3c.environment.api.powerplatform.com:443" + invoke + "?" + query
	lit := notifytest.Lit
	notifytest.CheckURLs(t, teams.Service, []string{sig, "SiGnAtUrE-9x", "0c8e2f57"}, []notifytest.URLCase{
		{URL: "teams://?host=" + url.QueryEscape("https://"+logic), Want: teams.Config{WebhookURL: lit("https://" + logic)}, Masked: "teams://?host=***"},
		{URL: "teams:///?host=" + url.QueryEscape("https://"+platform), Want: teams.Config{WebhookURL: lit("https://" + platform)}, Masked: "teams:///?host=***"},
		{URL: "teams+https://" + logic, Want: teams.Config{WebhookURL: lit("https://" + logic)},
			Masked: "teams+https://prod-00.westus.logic.azure.com:443/workflows/abc123/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=***"},
		{URL: "teams+https://" + platform, Want: teams.Config{WebhookURL: lit("https://" + platform)},
			Masked: "teams+https://default1a2b.3c.environment.api.powerplatform.com:443" + invoke + "?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=***"},

		{URL: "teams://0c8e2f57@9a1b-4c2d/altId/groupOwner?host=example.webhook.office.com", Err: "user: is shoutrrr's Office 365 connector form (teams://group@tenant/altId/groupOwner), and Microsoft retired those connectors"},
		{URL: "teams:///0c8e2f57/x?host=example.webhook.office.com", Err: "path: is shoutrrr's Office 365 connector form"},
		{URL: "teams://?host=" + url.QueryEscape("https://example.webhook.office.com/webhookb2/0c8e2f57@x/IncomingWebhook/y/z"), Err: "query parameter host: is an Office 365 connector webhook, which Microsoft has retired"},
		{URL: "teams+https://me:0c8e2f57@h.example/w", Err: "user: a workflow's URL has none"},
		{URL: "teams://?host=" + url.QueryEscape("https://"+logic) + "&Host=x", Err: "query parameter Host: given twice"},
		{URL: "teams+https://example.webhook.office.com/webhookb2/0c8e2f57/IncomingWebhook/y/z", Err: "host: is an Office 365 connector webhook, which Microsoft has retired"},
		{URL: "teams://prod-00.westus.logic.azure.com/?host=x", Err: "host: a teams:// URL has none: the workflow's whole URL goes in ?host="},
		{URL: "teams://", Err: "query parameter host: empty: in Teams open the channel's ⋯ → Workflows"},
		{URL: "teams://?host=prod-00.westus.logic.azure.com", Err: "query parameter host: not the workflow's https://… URL"},
		{URL: "teams://?host=https://" + logic, Err: "query parameter host: holds the workflow's URL unencoded, so its sig= and the parameters before it were cut off"},
		{URL: "teams+https:///workflows/x", Err: "host: empty: write the workflow's URL with teams+ in front"},
		{URL: "teams+https://h.example:x/w", Err: "port: not a number"},
		{URL: "teams://?host=" + url.QueryEscape("https://"+logic) + "&title=NAS", Err: "query parameter title: zwatch lays out each card itself"},
		{URL: "teams+https://" + logic + "&color=red", Err: "query parameter color: zwatch lays out each card itself"},
	})
}
