// Package fleet runs zwatch on many machines: the agent's bounded publish
// buffer (collectors keep working while the NATS cluster is unreachable), the
// leases that keep exactly one rule engine, and one answer reader per bot or
// account, active among several servers, and the fleet view behind
// `zwatch status --all-hosts`. See docs/fleet.md.
package fleet
