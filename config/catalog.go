package config

// Catalog tells config which extensions exist: the rules whose names
// rules.for and rules.disabled may use, the sections under rules: that the
// rules own, and the channel types notify.channels may name. The rules and
// notifiers packages own those tables and config cannot import them (they
// import config), so the caller passes them in; package catalog builds the
// one zwatch uses.
type Catalog struct {
	// Rules are the alert names the rule engine can raise, in catalogue
	// order (rules.AlertNames of rules.Catalogue()).
	Rules []string
	// RuleSections are the sections under rules: that rules own (kernel,
	// capacity, ...), in the order check-config prints them and the
	// example config lists them (rules.ConfigSections of rules.Catalogue()).
	RuleSections []RuleSection
	// Channels are the channel types notify.channels may name, in the
	// order the documentation presents them (see ChannelType).
	Channels []ChannelType
}
