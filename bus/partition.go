package bus

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A partitioned facts stream (fleet.partitions > 1) stores each fact under
// zwatch.<partition>.v1.<host>.<kind>...: the NATS servers add the
// partition token themselves with the stream's subject transform
// partition(n, host), so that each of n durable consumers sees the facts of
// its share of the hosts, and any number of servers can split the rule
// engine's work without a routing layer of their own. Agents keep
// publishing to zwatch.v1.<host>.…: their permissions do not change.

// MaxPartitions bounds fleet.partitions: each partition is a durable
// consumer and a lease.
const MaxPartitions = 1024

// partitionSource is what the transform applies to: every fact subject.
const partitionSource = "zwatch." + Version + ".*.>"

// PartitionTransform is the facts stream's subject transform for n
// partitions.
func PartitionTransform(n int) *jetstream.SubjectTransformConfig {
	return &jetstream.SubjectTransformConfig{
		Source:      partitionSource,
		Destination: fmt.Sprintf("zwatch.{{partition(%d,1)}}.%s.{{wildcard(1)}}.>", n, Version),
	}
}

var partitionDest = regexp.MustCompile(`^zwatch\.\{\{\s*[pP]artition\s*\(\s*(\d+)\s*,\s*1\s*\)\s*\}\}\.` + Version + `\.\{\{\s*[wW]ildcard\s*\(\s*1\s*\)\s*\}\}\.>$`)

// PartitionsOf returns how many partitions a facts stream's configuration
// has: 1 without a transform, 0 and an error for a transform zwatch did not
// write.
func PartitionsOf(cfg jetstream.StreamConfig) (int, error) {
	t := cfg.SubjectTransform
	if t == nil || t.Destination == "" {
		return 1, nil
	}
	m := partitionDest.FindStringSubmatch(t.Destination)
	if t.Source != partitionSource || m == nil {
		return 0, fmt.Errorf("stream %s has a subject transform zwatch does not know (%s -> %s): remove it", cfg.Name, t.Source, t.Destination)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("stream %s: partition count %q", cfg.Name, m[1])
	}
	return n, nil
}

// FactPartitions reads how many partitions the facts stream has.
func FactPartitions(ctx context.Context, js jetstream.JetStream) (int, error) {
	s, err := js.Stream(ctx, StreamFacts)
	if err != nil {
		return 0, fmt.Errorf("facts stream %s: %w", StreamFacts, err)
	}
	return PartitionsOf(s.CachedInfo().Config)
}

// PartitionOf is the partition of a host among n, as the servers' transform
// computes it: FNV-1a of the host's subject token, modulo n.
func PartitionOf(host string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(Token(host)))
	return int(h.Sum32() % uint32(n))
}

// PartitionFilter is the subject filter of partition p's facts.
func PartitionFilter(p int) string {
	return "zwatch." + strconv.Itoa(p) + "." + Version + ".>"
}

// Canonical returns a fact subject without its partition token:
// zwatch.7.v1.nas1.zpool.status becomes zwatch.v1.nas1.zpool.status. Other
// subjects are returned as they are.
func Canonical(subject string) string {
	rest, ok := strings.CutPrefix(subject, "zwatch.")
	if !ok {
		return subject
	}
	part, after, ok := strings.Cut(rest, ".")
	if !ok || part == "" || !strings.HasPrefix(after, Version+".") {
		return subject
	}
	for _, c := range part {
		if c < '0' || c > '9' {
			return subject
		}
	}
	return "zwatch." + after
}

// StoredFilter turns a fact subject or filter in its published form
// (zwatch.v1.<host|*>.<kind>...) into the form the facts stream stores
// with n partitions: the host's own partition for one host, any partition
// for a wildcard host.
func StoredFilter(subject string, n int) string {
	if n <= 1 {
		return subject
	}
	host, ok := HostOf(subject)
	if !ok {
		return subject
	}
	p := "*"
	if host != "*" && host != ">" {
		p = strconv.Itoa(PartitionOf(host, n))
	}
	return "zwatch." + p + "." + strings.TrimPrefix(subject, "zwatch.")
}

// ErrPartitionsDiffer is returned when this server's fleet.partitions
// differs from the existing facts stream's.
var ErrPartitionsDiffer = errors.New("fleet.partitions differs from the facts stream's")

// checkPartitions refuses to change an existing stream's partition count:
// the hosts' facts, consumers and leases would be split differently from
// what the other servers use.
func checkPartitions(existing jetstream.StreamConfig, want int) error {
	have, err := PartitionsOf(existing)
	if err != nil {
		return err
	}
	if want <= 1 {
		want = 1
	}
	switch {
	case have == want:
		return nil
	case have == 1:
		return nil // the upgrade of an unpartitioned stream (rules drains what it holds)
	default:
		return fmt.Errorf("%w: the facts stream %s is split into %d partitions and this server has fleet.partitions: %d; set fleet.partitions: %d on every server (changing it means recreating the stream: docs/fleet.md)",
			ErrPartitionsDiffer, existing.Name, have, want, have)
	}
}

// StoredFilters maps fact subjects or filters to how the facts stream
// stores them (StoredFilter with the stream's partition count).
func StoredFilters(ctx context.Context, js jetstream.JetStream, subjects []string) ([]string, error) {
	n, err := FactPartitions(ctx, js)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(subjects))
	for i, s := range subjects {
		out[i] = StoredFilter(s, n)
	}
	return out, nil
}
