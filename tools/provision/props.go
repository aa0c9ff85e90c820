package provision

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Defaults matching today's guidance for a new pool's root dataset (Linux).
var defaultRootProps = map[string]string{
	"compression": "lz4",
	"atime":       "off",
	"xattr":       "sa",
	"acltype":     "posixacl",
}

var (
	onOff        = []string{"on", "off"}
	reSize       = regexp.MustCompile(`^(\d+(?:\.\d+)?)([KMGTPE]?)(?:I?B)?$`)
	reZstdLevel  = regexp.MustCompile(`^zstd-(\d+)$`)
	reZstdFast   = regexp.MustCompile(`^zstd-fast(?:-(\d+))?$`)
	reGzipLevel  = regexp.MustCompile(`^gzip-([1-9])$`)
	reFeature    = regexp.MustCompile(`^feature@[a-z0-9_]+$`)
	reUserProp   = regexp.MustCompile(`^[a-z0-9_.+-]*:[a-z0-9_.:+-]+$`)
	validSizeMsg = "a size such as 128K or 1M"
)

type propRule struct {
	values []string                // allowed words, if any
	check  func(v string) string   // returns a problem, or ""
	hint   string                  // what a good value is
	fix    func(path string) error // set: refused, with this explanation
}

// datasetProps are the dataset properties a plan may set at creation, with
// what each accepts. Others are refused so a typo (compresion) is caught.
var datasetProps = map[string]propRule{
	"compression":          {check: checkCompression, hint: "lz4, zstd, zstd-1 … zstd-19, zstd-fast, gzip-1 … gzip-9, zle, off"},
	"atime":                {values: onOff},
	"relatime":             {values: onOff},
	"xattr":                {values: []string{"on", "off", "sa", "dir"}},
	"acltype":              {values: []string{"off", "noacl", "nfsv4", "posix", "posixacl"}},
	"aclinherit":           {values: []string{"discard", "noallow", "restricted", "passthrough", "passthrough-x"}},
	"aclmode":              {values: []string{"discard", "groupmask", "passthrough", "restricted"}},
	"recordsize":           {check: checkBlockSize(512, 16<<20), hint: "a power of two from 512 to 16M, e.g. 128K or 1M"},
	"dnodesize":            {values: []string{"legacy", "auto", "1k", "2k", "4k", "8k", "16k"}},
	"sync":                 {values: []string{"standard", "always", "disabled"}},
	"logbias":              {values: []string{"latency", "throughput"}},
	"primarycache":         {values: []string{"all", "none", "metadata"}},
	"secondarycache":       {values: []string{"all", "none", "metadata"}},
	"copies":               {values: []string{"1", "2", "3"}},
	"checksum":             {values: []string{"on", "off", "fletcher2", "fletcher4", "sha256", "noparity", "sha512", "skein", "edonr", "blake3"}},
	"dedup":                {values: []string{"off", "on", "verify", "sha256", "sha256,verify", "sha512", "sha512,verify", "skein", "skein,verify", "edonr,verify", "blake3", "blake3,verify"}},
	"normalization":        {values: []string{"none", "formC", "formD", "formKC", "formKD"}},
	"casesensitivity":      {values: []string{"sensitive", "insensitive", "mixed"}},
	"utf8only":             {values: onOff},
	"canmount":             {values: []string{"on", "off", "noauto"}},
	"readonly":             {values: onOff},
	"exec":                 {values: onOff},
	"setuid":               {values: onOff},
	"devices":              {values: onOff},
	"snapdir":              {values: []string{"hidden", "visible", "disabled"}},
	"redundant_metadata":   {values: []string{"all", "most", "some", "none"}},
	"special_small_blocks": {check: checkSizeOrZero, hint: "0, or a power of two such as 16K or 64K"},
	"quota":                {check: checkSizeOrNone, hint: "none or " + validSizeMsg},
	"refquota":             {check: checkSizeOrNone, hint: "none or " + validSizeMsg},
	"reservation":          {check: checkSizeOrNone, hint: "none or " + validSizeMsg},
	"refreservation":       {check: checkSizeOrNone, hint: "none or " + validSizeMsg},
	"sharenfs":             {check: anyValue},
	"sharesmb":             {check: anyValue},
	"overlay":              {values: onOff},
	"vscan":                {values: onOff},
	"zoned":                {values: onOff},
	"mountpoint":           {fix: refuse("give it as mountpoint: beside properties (or --mountpoint)")},
	"encryption":           {fix: refuse("use the encryption: block; zwatch uses aes-256-gcm")},
	"keyformat":            {fix: refuse("use encryption.keyformat")},
	"keylocation":          {fix: refuse("use encryption.key_file; zwatch sets keylocation from it")},
	"volsize":              {fix: refuse("volumes (zvols) are not provisioned by zwatch; create them with zfs create -V after the pool exists")},
	"volblocksize":         {fix: refuse("volumes (zvols) are not provisioned by zwatch")},
}

// poolProps are the pool properties a plan may set (ashift has its own key).
var poolProps = map[string]propRule{
	"autotrim":      {values: onOff},
	"autoexpand":    {values: onOff},
	"autoreplace":   {values: onOff},
	"failmode":      {values: []string{"wait", "continue", "panic"}},
	"comment":       {check: anyValue},
	"cachefile":     {check: anyValue},
	"compatibility": {check: anyValue},
	"multihost":     {values: onOff},
	"listsnapshots": {values: onOff},
	"delegation":    {values: onOff},
	"ashift":        {fix: refuse("use the top-level ashift: key (or leave it out to take it from the disks)")},
	"altroot":       {fix: refuse("altroot is for rescue imports, not for a new pool")},
}

func refuse(why string) func(string) error {
	return func(path string) error { return fmt.Errorf("%s", why) }
}

func anyValue(v string) string {
	if strings.ContainsAny(v, "\n\x00") {
		return "must be one line"
	}
	return ""
}

func validateDatasetProperty(k, v, path string, errs *Errors) {
	if reUserProp.MatchString(k) {
		if why := anyValue(v); why != "" {
			errs.add(path, "%s", why)
		}
		return // a user property (com.sun:auto-snapshot)
	}
	rule, ok := datasetProps[k]
	if !ok {
		errs.add(path, "not a ZFS dataset property zwatch can set at creation%s", suggestProp(k, datasetProps))
		return
	}
	applyRule(rule, k, v, path, errs)
}

func validatePoolProperty(k, v, path string, errs *Errors) {
	if reFeature.MatchString(k) {
		if v != "enabled" && v != "disabled" {
			errs.add(path, "%q: a feature is enabled or disabled", v)
		}
		return
	}
	rule, ok := poolProps[k]
	if !ok {
		errs.add(path, "not a pool property zwatch can set at creation%s", suggestProp(k, poolProps))
		return
	}
	applyRule(rule, k, v, path, errs)
}

func applyRule(rule propRule, k, v, path string, errs *Errors) {
	if rule.fix != nil {
		errs.add(path, "%v", rule.fix(path))
		return
	}
	if len(rule.values) > 0 {
		for _, a := range rule.values {
			if v == a {
				return
			}
		}
		errs.add(path, "%q is not a value of %s: use %s", v, k, strings.Join(rule.values, ", "))
		return
	}
	if why := rule.check(v); why != "" {
		if rule.hint != "" {
			errs.add(path, "%q %s: use %s", v, why, rule.hint)
		} else {
			errs.add(path, "%q %s", v, why)
		}
	}
}

func suggestProp(k string, m map[string]propRule) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return didYouMean(k, names)
}

func checkCompression(v string) string {
	switch v {
	case "on", "off", "lz4", "lzjb", "zle", "gzip", "zstd", "zstd-fast":
		return ""
	}
	if m := reZstdLevel.FindStringSubmatch(v); m != nil {
		if n, _ := strconv.Atoi(m[1]); n >= 1 && n <= 19 {
			return ""
		}
		return "is not a zstd level (1 to 19)"
	}
	if m := reZstdFast.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[1])
		if (n >= 1 && n <= 10) || n == 20 || n == 30 || n == 40 || n == 50 || n == 60 || n == 70 || n == 80 || n == 90 || n == 100 || n == 500 || n == 1000 {
			return ""
		}
		return "is not a zstd-fast level"
	}
	if reGzipLevel.MatchString(v) {
		return ""
	}
	return "is not a compression"
}

// ParseSize reads a ZFS size (1M, 128K, 1.5G, 4096) as bytes, as zfs does:
// K, M, G… are powers of 1024.
func ParseSize(s string) (uint64, bool) {
	m := reSize.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40, "P": 50, "E": 60}[m[2]]
	v := f * float64(uint64(1)<<shift)
	if v > float64(1<<62) {
		return 0, false
	}
	return uint64(v), true
}

func checkBlockSize(lo, hi uint64) func(string) string {
	return func(v string) string {
		n, ok := ParseSize(v)
		if !ok {
			return "is not a size"
		}
		if n < lo || n > hi || n&(n-1) != 0 {
			return "is not a block size"
		}
		return ""
	}
}

func checkSizeOrNone(v string) string {
	if v == "none" {
		return ""
	}
	if _, ok := ParseSize(v); !ok {
		return "is not a size"
	}
	return ""
}

func checkSizeOrZero(v string) string {
	if v == "0" {
		return ""
	}
	return checkBlockSize(512, 16<<20)(v)
}

// effective returns a dataset's value of property k: its own, inherited
// from parents listed in the plan, from the root dataset, or ZFS's default.
func (p *Plan) effective(dataset, k string) string {
	for name := dataset; name != ""; {
		for _, d := range p.Datasets {
			if d.Name == name {
				if v, ok := d.Properties[k]; ok {
					return v
				}
			}
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	if v, ok := p.Properties[k]; ok {
		return v
	}
	return zfsDefaults[k]
}

// zfsDefaults are OpenZFS's own defaults for the properties zwatch reasons about.
var zfsDefaults = map[string]string{
	// compression is always set on the root dataset by a plan (lz4 unless the
	// plan says otherwise), so this default is only a fallback.
	"compression": "off",
	"recordsize":  "128K",
	"atime":       "on",
	"xattr":       "on",
	"acltype":     "off",
}
