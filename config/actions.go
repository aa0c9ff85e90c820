package config

// ActionsConfig turns on what a person may have zwatch do to the box from
// a page, beyond acknowledging and snoozing (docs/notifications.md,
// "Replacing a disk from the phone").
type ActionsConfig struct {
	// Replace lets a page of a replaceable disk offer the replacement:
	// Telegram's Replace button runs zwatch replace's checks, asks once
	// more with the exact command and the disk it erases, then runs zpool
	// replace and reports the resilver. Off by default: it is the one
	// answer that writes to a disk.
	Replace bool `yaml:"replace"`
}

func (c *Config) validateActions(errs *Errors) {
	if !c.Actions.Replace {
		return
	}
	switch c.Role {
	case RoleAgent:
		errs.add("actions.replace", true, "an agent has no notifiers to answer pages: set actions.replace on a machine with role all")
	case RoleServer:
		errs.add("actions.replace", true, "a server watches no disks of its own, and zwatch replaces only disks of the machine it runs on: set actions.replace on a machine with role all")
	}
}
