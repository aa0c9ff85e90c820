package rules

import "encoding/json"

// legacyMemory is where 41d2458 and earlier kept rule memories: keys of
// the host's state itself (testdata/state/host-v1-41d2458.json). A state
// saved so is read with them (decodeHost), and each goes into Memory at
// legacyVersion under its owner's name, for the owner's migrate to read
// when it first needs it. So an upgrade keeps what the rules remembered,
// and no alert resolves or fires again for want of it.
type legacyMemory struct {
	ARCThrottleAt json.RawMessage `json:"arc_throttle_at"`
	Hangs         json.RawMessage `json:"hangs"`
	SlowIO        json.RawMessage `json:"slow_io"`
	SeenDisks     json.RawMessage `json:"seen_disks"`
	ZFSVersion    json.RawMessage `json:"zfs_version"`
	Kernel        json.RawMessage `json:"kernel"`
	Counters      json.RawMessage `json:"counters"`
	Scrubs        json.RawMessage `json:"scrubs"`
	Capacity      json.RawMessage `json:"capacity"`
}

// legacyKey is one legacy key's value and the memory that took it over.
type legacyKey struct {
	owner memoryDef
	saved json.RawMessage
}

func (l *legacyMemory) keys() []legacyKey {
	return []legacyKey{
		{arcThrottleMemory, l.ARCThrottleAt},
		{hangsMemory, l.Hangs},
		{slowIOMemory, l.SlowIO},
		{seenDisksMemory, l.SeenDisks},
		{zfsVersionMemory, l.ZFSVersion},
		{kernelMemory, l.Kernel},
		{vdevErrorsMemory, l.Counters},
		{scrubMemory, l.Scrubs},
		{forecastMemory, l.Capacity},
	}
}

// moveInto puts each legacy key into h.Memory under the memory that took
// it over, unless h already has that memory.
func (l *legacyMemory) moveInto(h *hostState) {
	for _, m := range l.keys() {
		name := m.owner.memoryName()
		if len(m.saved) == 0 || string(m.saved) == "null" || h.Memory[name] != nil {
			continue
		}
		if h.Memory == nil {
			h.Memory = map[string]*memo{}
		}
		h.Memory[name] = &memo{Version: legacyVersion, Data: m.saved}
	}
}
