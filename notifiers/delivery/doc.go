// Package delivery owns how a notification gets from the rule engine to
// the channels, and what happens when storage fails: the outbox, direct
// delivery around it, dead letters, per-incident order, the storage watch,
// consumer repair and the health canary.
//
// The rule engine calls one interface, Sender (queue.go): Put a notification (in order; durable
// through the outbox when it takes the write, delivered directly
// otherwise), Flush, and Durable to know whether delivery is durable now.
// The rest is here too: the outbox, one durable consumer of ZWATCH_ALERTS
// per channel (outbox.go, Run), each incident in order (order.go) with the
// channel's health deciding retries (health.go) and its quiet hours holding
// warnings back (quiet.go); dead letters
// (deadletter.go); direct delivery around the outbox and the record that
// keeps it from sending twice (direct.go); the storage watch that pages
// StateStorageFull/Failed and decides when to reload JetStream
// (storage.go); repair of damaged consumers and lost messages (repair.go);
// the health canary (canary.go); the channels' answer readers, one per
// shared account in a fleet (answerlease.go); and Service, which wires them
// for the daemon.
//
// What stayed elsewhere: bus keeps what is the embedded server's own
// (Bus.RestartJetStream, Bus.StoreDir, stream sizing and StoreSpace):
// mechanisms, while the decision when to use them is here. notifiers keeps
// the channel registry, rendering, services, test sends and the inventory
// feed. The daemon keeps the heartbeat's systemd and URL signals, which ask
// Canary.Check. Package rules re-exports CanaryHeader/CanaryPrefix and the
// storage alert names; this package must not import rules.
package delivery
