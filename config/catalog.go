package config

import "time"

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
	// Collectors are the collectors with an interval of their own, set by
	// collectors.<name>.interval (collectors.Table()).
	Collectors []CollectorInfo
}

// CollectorInfo is one collector whose poll interval is its own key.
type CollectorInfo struct {
	// Name is the collector's name, the key under collectors:.
	Name string
	// Interval is its default; Minimum the shortest interval it accepts.
	Interval, Minimum time.Duration
}
