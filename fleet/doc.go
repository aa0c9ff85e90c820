// Package fleet runs zwatch on many machines: the agent's bounded publish
// buffer (collectors keep working while the NATS cluster is unreachable), the
// lease that keeps exactly one rule engine active among several servers, and
// the fleet view behind `zwatch status --all-hosts`. See docs/fleet.md.
package fleet
