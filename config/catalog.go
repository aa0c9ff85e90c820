package config

// Catalog tells config which extensions exist: the rules whose names
// rules.for and rules.disabled may use, and the channel types notify.channels
// may name. The rules and notifiers packages own those tables and config
// cannot import them (they import config), so the caller passes them in;
// package catalog builds the one zwatch uses.
type Catalog struct {
	// Rules are the alert names the rule engine can raise, in catalogue
	// order (rules.ConfigRules of rules.Catalogue()).
	Rules []RuleInfo
	// Channels are the channel types notify.channels may name, in the
	// order the documentation presents them (see ChannelType).
	Channels []ChannelType
}

// RuleInfo is what config needs to know of one alert name: that it exists.
type RuleInfo struct {
	Name string
}

// RuleNames lists the catalogue's alert names in order.
func (c Catalog) RuleNames() []string {
	out := make([]string, len(c.Rules))
	for i, r := range c.Rules {
		out[i] = r.Name
	}
	return out
}
