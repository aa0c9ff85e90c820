package zfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseStatusJSON parses `zpool status -j [--json-int] [-p] [-P]` (OpenZFS
// 2.3+). Pools come back in the order the JSON lists them. Numbers may be
// JSON integers (--json-int) or strings, and both "guid"/"pool_guid" and
// both vdev state spellings (HEALTHY/ONLINE, CANT_OPEN/UNAVAIL) are read.
// Nested and --json-flat-vdevs layouts are both accepted.
func ParseStatusJSON(r io.Reader) ([]*Pool, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxJSONBytes+1))
	if err != nil {
		return nil, fmt.Errorf("zfs: reading zpool status JSON: %w", err)
	}
	if len(data) > maxJSONBytes {
		return nil, errors.New("zfs: zpool status JSON larger than 256 MiB")
	}
	v, err := decodeOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("zfs: decoding zpool status JSON: %w", err)
	}
	top, ok := v.(*jobject)
	if !ok {
		return nil, errors.New("zfs: zpool status JSON is not an object")
	}
	poolsV, hasPools := top.get("pools")
	if !hasPools {
		if _, ok := top.get("output_version"); ok {
			return nil, nil // zpool prints no "pools" when there are none
		}
		return nil, errors.New(`zfs: zpool status JSON has no "pools"`)
	}
	pools, ok := poolsV.(*jobject)
	if !ok {
		if poolsV == nil {
			return nil, nil
		}
		return nil, errors.New(`zfs: zpool status JSON "pools" is not an object`)
	}
	out := make([]*Pool, 0, len(pools.keys))
	for i, k := range pools.keys {
		po, ok := pools.vals[i].(*jobject)
		if !ok {
			return nil, fmt.Errorf("zfs: zpool status JSON pool %q is not an object", k)
		}
		out = append(out, poolFromJSON(k, po))
	}
	return out, nil
}

// maxJSONBytes bounds the input read into memory; a 1,000-disk pool is
// well under 1 MiB.
const maxJSONBytes = 256 << 20

var reStatusCode = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// poolFromJSON maps one entry of "pools".
func poolFromJSON(key string, o *jobject) *Pool {
	p := &Pool{
		Name:  o.str("name"),
		State: strings.ToUpper(o.str("state")),
		GUID:  o.str("pool_guid"),
		MsgID: o.str("msgid"),
		See:   o.str("moreinfo"),
	}
	if p.Name == "" {
		p.Name = key
	}
	if p.GUID == "" {
		p.GUID = o.str("guid")
	}
	p.Status = collapseSpace(o.str("status"))
	if reStatusCode.MatchString(p.Status) {
		// Pre-release -j printed zpool_status_t names; "OK" means no status.
		if p.Status != "OK" {
			p.Notes = append(p.Notes, "status code: "+p.Status)
		}
		p.Status = ""
	}
	p.Action = collapseSpace(o.str("action"))
	p.Scan = scanFromJSON(o.obj("scan_stats"))
	p.Remove = statsSummary(o.obj("removal_stats"))
	p.Checkpoint = statsSummary(o.obj("checkpoint_stats"))
	if s := statsSummary(o.obj("raidz_expand_stats")); s != "" {
		p.Notes = append(p.Notes, "expand: "+s)
	}
	vdevsFromJSON(p, o)
	p.DataErrors, p.ErrorsUnknown = dataErrorsFromJSON(o)
	return p
}

// dataErrorsFromJSON reads error_count and, with -v, the file list; unknown
// is true when the pool has neither.
func dataErrorsFromJSON(o *jobject) (de DataErrors, unknown bool) {
	de = DataErrors{Files: []string{}}
	unknown = true
	if n, _, ok := o.uint("error_count"); ok {
		de.Count = int(min(n, 1<<31-1))
		unknown = false
	}
	for _, k := range []string{"errlist", "errors", "error_list"} {
		if v, ok := o.get(k); ok {
			if files := stringList(v); len(files) > 0 {
				de.Files = files
				unknown = false
				if de.Count < len(files) {
					de.Count = len(files)
				}
			}
		}
	}
	return de, unknown
}

// statsSummary renders a stats object as "key=value ..." for people; zpool
// -j gives removal and checkpoint state as fields rather than sentences.
func statsSummary(o *jobject) string {
	if o == nil {
		return ""
	}
	parts := make([]string, 0, len(o.keys))
	for i, k := range o.keys {
		if s := scalarText(o.vals[i]); s != "" {
			parts = append(parts, k+"="+s)
		}
	}
	return strings.Join(parts, " ")
}

// vdevsFromJSON fills the root, data vdevs and classes.
func vdevsFromJSON(p *Pool, o *jobject) {
	all := o.obj("vdevs")
	if all != nil && len(all.keys) > 1 {
		flatVdevsFromJSON(p, all)
		return
	}
	if all != nil {
		for i, k := range all.keys {
			ro, ok := all.vals[i].(*jobject)
			if !ok {
				continue
			}
			root := vdevFromJSON(k, ro, &p.Scan, false, false)
			fixJSONRoot(p, root.Vdev)
			kids := ro.obj("vdevs")
			for j, kk := range kids.keysOrNil() {
				if ko, ok := kids.vals[j].(*jobject); ok {
					c := vdevFromJSON(kk, ko, &p.Scan, false, true)
					p.addClassVdev(c.class, c.Vdev)
				}
			}
		}
	}
	for _, cl := range []struct{ key, class string }{
		{"dedup", "dedup"}, {"special", "special"}, {"logs", "logs"},
		{"l2cache", "cache"}, {"cache", "cache"}, {"spares", "spares"},
	} {
		co := o.obj(cl.key)
		if co == nil {
			continue
		}
		for i, k := range co.keys {
			vo, ok := co.vals[i].(*jobject)
			if !ok {
				continue
			}
			v := vdevFromJSON(k, vo, &p.Scan, cl.class == "spares", true)
			p.addClassVdev(cl.class, v.Vdev)
		}
	}
}

// flatVdevsFromJSON rebuilds the tree from --json-flat-vdevs, where every
// vdev names its parent and allocation class.
func flatVdevsFromJSON(p *Pool, all *jobject) {
	byName := map[string]*Vdev{}
	for i, k := range all.keys {
		vo, ok := all.vals[i].(*jobject)
		if !ok {
			continue
		}
		class := jsonClass(vo.str("class"))
		jv := vdevFromJSON(k, vo, &p.Scan, class == "spares", false)
		v := jv.Vdev
		if vo.str("vdev_type") == "root" || (p.Root == nil && v.Name == p.Name) {
			fixJSONRoot(p, v)
			byName[v.Name] = v
			continue
		}
		parent := byName[vo.str("parent")]
		if parent == nil || parent == p.Root {
			p.addClassVdev(class, v)
		} else {
			parent.Children = append(parent.Children, v)
		}
		byName[v.Name] = v
	}
}

// fixJSONRoot makes v the pool's root vdev; early -j output gave the root
// no type or state.
func fixJSONRoot(p *Pool, v *Vdev) {
	v.Type = VdevRoot
	v.Path = ""
	if v.State == "" {
		v.State = p.State
	}
	p.Root = v
}

// jsonClass maps the "class" field to the config class names.
func jsonClass(c string) string {
	switch c {
	case "log", "logs":
		return "logs"
	case "l2cache", "cache":
		return "cache"
	case "spare", "spares":
		return "spares"
	case "special", "dedup":
		return c
	}
	return ""
}

// addClassVdev appends a top-level vdev to the list of its class.
func (p *Pool) addClassVdev(class string, v *Vdev) {
	switch class {
	case "logs":
		p.Logs = append(p.Logs, v)
	case "cache":
		p.Cache = append(p.Cache, v)
	case "spares":
		p.Spares = append(p.Spares, v)
	case "special":
		p.Special = append(p.Special, v)
	case "dedup":
		p.Dedup = append(p.Dedup, v)
	default:
		p.Vdevs = append(p.Vdevs, v)
	}
}

// classVdev is a vdev with the class its JSON entry declares, if any.
type classVdev struct {
	*Vdev
	class string
}

// vdevFromJSON maps one vdev object and, with withKids, its nested "vdevs".
func vdevFromJSON(key string, o *jobject, scan *Scan, isSpare, withKids bool) classVdev {
	v := &Vdev{
		Name:     o.str("name"),
		GUID:     o.str("guid"),
		State:    normalizeState(o.str("state")),
		Notes:    []string{},
		Children: []*Vdev{},
	}
	if v.Name == "" {
		v.Name = key
	}
	setJSONType(v, o.str("vdev_type"), o.str("path"))
	setJSONCounters(v, o)
	if kids := o.obj("vdevs"); kids != nil && withKids {
		for i, k := range kids.keys {
			ko, ok := kids.vals[i].(*jobject)
			if !ok {
				continue
			}
			c := vdevFromJSON(k, ko, scan, false, true)
			v.Children = append(v.Children, c.Vdev)
		}
	}
	if v.State == "" && len(v.Children) > 0 {
		// OpenZFS 2.3.2 prints a dRAID top-level vdev with no vdev_type,
		// guid or state (captured/zfs-2.3.2/f3-draid.zpool-status-j.json);
		// the text form shows ONLINE, or DEGRADED once a child is not.
		v.State = derivedState(v.Children)
	}
	setJSONNotes(v, o, scan, isSpare)
	return classVdev{Vdev: v, class: jsonClass(o.str("class"))}
}

// derivedState is an interior vdev's state from its children's, for JSON
// that omits it: ONLINE when all are, else DEGRADED.
func derivedState(children []*Vdev) string {
	for _, c := range children {
		if c.State != StateOnline {
			return StateDegraded
		}
	}
	return StateOnline
}

// setJSONType maps vdev_type; layout details still come from the name.
func setJSONType(v *Vdev, typ, path string) {
	switch typ {
	case "disk", "file":
		v.Type = typ
		v.Path = path
		if v.Path == "" {
			v.Path = v.Name
		}
		return
	case "root":
		v.Type = VdevRoot
		return
	}
	if interiorType(v) {
		return
	}
	switch typ {
	case "mirror", "raidz", "draid", "replacing", "spare", "indirect", "hole", "dspare":
		v.Type = typ
	case "":
		classifyLeaf(v)
		if path != "" {
			v.Path = path
		}
	default:
		v.Type = VdevUnknown
		v.Path = path
	}
}

// setJSONCounters reads the error counters and slow I/Os.
func setJSONCounters(v *Vdev, o *jobject) {
	for _, c := range []struct {
		key string
		dst *uint64
	}{
		{"read_errors", &v.ReadErrors},
		{"write_errors", &v.WriteErrors},
		{"checksum_errors", &v.ChecksumErrors},
	} {
		n, exact, _ := o.uint(c.key)
		*c.dst = n
		if !exact {
			v.ErrorsApproximate = true
		}
	}
	if n, exact, ok := o.uint("slow_ios"); ok {
		v.SlowIOs = &n
		if !exact {
			v.ErrorsApproximate = true
		}
	}
}

// auxNotes are the texts zpool prints for vdev_aux_t values, keyed by the
// names -j uses.
var auxNotes = map[string]string{
	"OPEN_FAILED":      "cannot open",
	"CORRUPT_DATA":     "corrupted data",
	"NO_REPLICAS":      "insufficient replicas",
	"BAD_GUID_SUM":     "missing device",
	"TOO_SMALL":        "device too small",
	"BAD_LABEL":        "invalid label",
	"VERSION_NEWER":    "newer version",
	"VERSION_OLDER":    "older version",
	"UNSUP_FEAT":       "unsupported feature(s)",
	"SPARED":           "currently in use",
	"ERR_EXCEEDED":     "too many errors",
	"IO_FAILURE":       "experienced I/O failures",
	"BAD_LOG":          "bad intent log",
	"EXTERNAL":         "external device fault",
	"SPLIT_POOL":       "split into new pool",
	"CHILDREN_OFFLINE": "all children offline",
	"ASHIFT_TOO_BIG":   "unsupported minimum blocksize",
	"EXTERNAL_PERSIST": "external device fault",
}

// setJSONNotes rebuilds the notes the text output prints after counters.
func setJSONNotes(v *Vdev, o *jobject, scan *Scan, isSpare bool) {
	if was := o.str("was"); was != "" {
		v.Was = was
	} else if np, _, ok := o.uint("not_present"); ok && np != 0 {
		v.Was = o.str("path")
	}
	if isGUIDName(v.Name) && v.Was != "" {
		v.Path = v.Was
	}
	if aux := o.str("aux"); aux != "" && aux != "NONE" {
		if t, ok := auxNotes[strings.TrimPrefix(aux, "VDEV_AUX_")]; ok {
			aux = t
		}
		if !(isSpare && aux == "currently in use") {
			v.Notes = append(v.Notes, aux)
		}
	}
	if isSpare {
		sparesState(v, o)
	}
	if b, _, _ := o.uint("removing"); b != 0 {
		v.Notes = append(v.Notes, "(removing)")
	} else if b, _, _ := o.uint("noalloc"); b != 0 {
		v.Notes = append(v.Notes, "(non-allocating)")
	}
	if sp, _, _ := o.uint("scan_processed"); sp != 0 && len(v.Children) == 0 &&
		scan.State == ScanStateScanning {
		if scan.Function == ScanResilver {
			v.Notes = append(v.Notes, "(resilvering)")
		} else {
			v.Notes = append(v.Notes, "(repairing)")
		}
	}
	if b, _, _ := o.uint("resilver_deferred"); b != 0 {
		v.Notes = append(v.Notes, "(awaiting resilver)")
	}
}

// sparesState shows hot spares as zpool's text does: AVAIL, or INUSE with
// the note "currently in use".
func sparesState(v *Vdev, o *jobject) {
	aux := strings.TrimPrefix(o.str("aux"), "VDEV_AUX_")
	switch {
	case aux == "SPARED" || v.State == StateInUse:
		v.State = StateInUse
		v.Notes = append(v.Notes, "currently in use")
	case v.State == StateOnline || v.State == StateAvail:
		v.State = StateAvail
	}
}

// scanFromJSON maps "scan_stats". Rates and estimates depend on the time
// of the call, which the JSON does not carry, so they are left zero.
func scanFromJSON(o *jobject) Scan {
	s := Scan{Function: ScanNone, State: ScanStateNone}
	if o == nil {
		return s
	}
	fn := strings.ToLower(o.str("function"))
	st := strings.ToLower(o.str("state"))
	if fn == "" || fn == ScanNone || st == "" || st == ScanStateNone {
		return errorScrubFromJSON(o, s)
	}
	s.Function = fn
	s.State = st
	approx := false
	get := func(k string) uint64 {
		n, exact, _ := o.uint(k)
		approx = approx || !exact
		return n
	}
	s.Start = jsonTime(o, "start_time")
	s.ExaminedBytes = get("examined")
	s.IssuedBytes = get("issued")
	s.TotalBytes = get("to_examine")
	s.RepairedBytes = get("processed")
	s.Errors = get("errors")
	skipped := get("skipped")
	s.Approximate = approx
	switch s.State {
	case ScanStateFinished:
		s.End = jsonTime(o, "end_time")
		s.PercentDone = 100
	case ScanStateCanceled:
		s.End = jsonTime(o, "end_time")
	case ScanStateScanning:
		if ps := jsonTime(o, "scrub_pause"); ps != nil {
			s.State = ScanStatePaused
			s.PausedSince = ps
		}
		if s.TotalBytes > skipped {
			// zpool: "we are only done with a block once we have issued it".
			s.PercentDone = float64(s.IssuedBytes) * 100 / float64(s.TotalBytes-skipped)
		}
	}
	return errorScrubFromJSON(o, s)
}

// errorScrubFromJSON lets a running error scrub (or one that is the only
// scan known) take the place of the scrub/resilver, as in the text parser.
func errorScrubFromJSON(o *jobject, s Scan) Scan {
	if !strings.EqualFold(o.str("err_scrub_func"), ScanErrorScrub) {
		return s
	}
	st := strings.ToLower(o.str("err_scrub_state"))
	running := st == "errorscrubbing" || st == ScanStateScanning
	if s.Function != ScanNone && !running {
		return s
	}
	es := Scan{Function: ScanErrorScrub, State: st}
	if running {
		es.State = ScanStateScanning
		if ps := jsonTime(o, "err_scrub_pause"); ps != nil {
			es.State = ScanStatePaused
			es.PausedSince = ps
		}
	}
	es.Start = jsonTime(o, "err_scrub_start_time")
	es.ExaminedBytes, _, _ = o.uint("err_scrub_examined")
	total, _, _ := o.uint("err_scrub_to_examine")
	es.TotalBytes = total
	switch es.State {
	case ScanStateFinished:
		es.End = jsonTime(o, "err_scrub_end_time")
		es.PercentDone = 100
	case ScanStateCanceled:
		es.End = jsonTime(o, "err_scrub_end_time")
	default:
		if total > 0 {
			es.PercentDone = float64(es.ExaminedBytes) * 100 / float64(total)
		}
	}
	return es
}

// jsonTime reads a time that --json-int prints as seconds since the epoch
// and plain -j as a date string. Zero means unset.
func jsonTime(o *jobject, k string) *time.Time {
	v, ok := o.get(k)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil || n <= 0 {
			return nil
		}
		return timePtr(time.Unix(n, 0))
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			if n <= 0 {
				return nil
			}
			return timePtr(time.Unix(n, 0))
		}
		if t, ok := parseZpoolDate(x, time.Local); ok {
			return &t
		}
	}
	return nil
}

// looksLikeJSON reports whether data starts with a JSON object, so callers
// holding raw output can pick a parser.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{'
}

// ParseStatus parses either form of `zpool status`, choosing by content.
func ParseStatus(data []byte) ([]*Pool, error) {
	if looksLikeJSON(data) {
		return ParseStatusJSON(bytes.NewReader(data))
	}
	return ParseStatusText(bytes.NewReader(data))
}
