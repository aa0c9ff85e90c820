package config

// Catalog tells config which extensions exist: the rules whose names
// rules.for and rules.disabled may use, and the channel types notify.channels
// may name. The rules and notifiers packages own those tables and config
// cannot import them (they import config), so the caller passes them in;
// package catalog builds the one zwatch uses.
type Catalog struct {
	// Rules are the alert names the rule engine can raise, in catalogue
	// order (rules.AlertNames of rules.Catalogue()).
	Rules []string
	// Channels are the channel types notify.channels may name, in the
	// order the documentation presents them (see ChannelType).
	Channels []ChannelType
}
