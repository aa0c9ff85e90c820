package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/klauspost/compress/s2"
)

// A host's state is JSON, S2-compressed when that saves space. The alerts
// it holds repeat long texts (summaries, guides, labels), so a state of
// 19 KB is about 4 KB compressed: the state bucket is written on every
// change, and JetStream keeps the block being written in memory, so its
// size is both disk writes and resident memory. States written before
// compression (plain JSON, which starts with '{') are still read.
var s2Magic = []byte("zs2\x00")

// compressAbove: smaller states are kept as plain JSON, where compression
// saves too little to be worth a second format to read. s2.Encode, not
// EncodeBetter: its tables are 64 KiB at most (EncodeBetter's 850 KiB stayed
// in the heap between saves, in s2's pool).
const compressAbove = 1 << 10

// maxStateBytes bounds what a compressed state may claim to expand to, so
// a damaged entry cannot make the engine allocate without limit.
const maxStateBytes = 64 << 20

func encodeState(h *hostState) ([]byte, error) {
	data, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode rule state of %s: %w", h.Host, err)
	}
	bound := s2.MaxEncodedLen(len(data))
	if len(data) <= compressAbove || bound < 0 {
		return data, nil
	}
	buf := make([]byte, len(s2Magic)+bound)
	copy(buf, s2Magic)
	enc := s2.Encode(buf[len(s2Magic):], data)
	return buf[:len(s2Magic)+len(enc)], nil
}

// StateJSON returns the JSON of a saved host state (the value of key
// rules.host.<host> in bus.StateBucket), expanding a compressed one, for
// readers that look at a part of it.
func StateJSON(data []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(data, s2Magic)
	if !ok {
		return data, nil
	}
	n, err := s2.DecodedLen(rest)
	if err != nil {
		return nil, fmt.Errorf("compressed rule state: %w", err)
	}
	if n > maxStateBytes {
		return nil, errors.New("compressed rule state claims more than 64 MiB")
	}
	out, err := s2.Decode(make([]byte, n), rest)
	if err != nil {
		return nil, fmt.Errorf("compressed rule state: %w", err)
	}
	return out, nil
}

// substanceSum hashes h without its bookkeeping (when each collector was
// last heard from, the heartbeat, the last fact applied from each source):
// what the rules decide with. The rules mark a state dirty whenever they
// re-evaluate an alert, even to the same result; the engine writes such a
// state only when this differs from what it saved last (Write with
// changedOnly, as the runner saves).
// The fields are cleared and put back in place: the engine's goroutine
// owns h while it saves.
func substanceSum(h *hostState) (uint64, error) {
	applied, heartbeat := h.Applied, h.Heartbeat
	lastSeen := make([]*time.Time, 0, len(h.Collectors))
	names := make([]string, 0, len(h.Collectors))
	for name, c := range h.Collectors {
		names, lastSeen = append(names, name), append(lastSeen, c.LastSeen)
		c.LastSeen = nil
	}
	h.Applied, h.Heartbeat = nil, nil
	// Encoded straight into the hash: json.Marshal would copy the whole
	// state out for every batch the rules touch, only to hash it.
	sum := fnv.New64a()
	err := json.NewEncoder(sum).Encode(h)
	h.Applied, h.Heartbeat = applied, heartbeat
	for i, name := range names {
		h.Collectors[name].LastSeen = lastSeen[i]
	}
	if err != nil {
		return 0, fmt.Errorf("encode rule state of %s: %w", h.Host, err)
	}
	return sum.Sum64(), nil
}

// HostHeartbeat reads the host's name and last heartbeat from a saved host
// state (the value of key rules.host.<host> in bus.StateBucket), compressed
// or not, for readers that need no more of it (fleet status).
func HostHeartbeat(data []byte) (host string, heartbeat *time.Time, ok bool) {
	js, err := StateJSON(data)
	if err != nil {
		return "", nil, false
	}
	var s struct {
		Host      string     `json:"host"`
		Heartbeat *time.Time `json:"heartbeat"`
	}
	if json.Unmarshal(js, &s) != nil || s.Host == "" {
		return "", nil, false
	}
	return s.Host, s.Heartbeat, true
}

// stateSum identifies saved bytes, to skip writing the same state again.
func stateSum(data []byte) uint64 {
	f := fnv.New64a()
	_, _ = f.Write(data)
	return f.Sum64()
}
