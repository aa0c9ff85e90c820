package provision

import "strings"

// Flags are the command-line form of a simple plan:
// zwatch provision --pool vault --layout raidz2 DISK...
type Flags struct {
	Pool   string
	Layout string
	Disks  []string
	// Vdevs splits Disks into this many vdevs of equal width (default 1).
	Vdevs      int
	Log        []string // mirrored when two or more
	Cache      []string
	Spares     []string
	Ashift     int
	Mountpoint string
	// Properties are root dataset properties as key=value.
	Properties []string
	// Datasets are name or name:key=value,key=value.
	Datasets      []string
	Encrypt       bool
	Passphrase    bool
	KeyFile       string
	Normalization bool // -O normalization=formD
}

// flagPaths renames plan key paths to the flags that set them.
var flagPaths = []struct{ from, to string }{
	{"vdevs[0].layout", "--layout"},
	{"vdevs[0].disks", "DISK arguments"},
	{"vdevs", "DISK arguments"},
	{"pool", "--pool"},
	{"ashift", "--ashift"},
	{"mountpoint", "--mountpoint"},
	{"encryption.key_file", "--key-file"},
	{"log", "--log"},
	{"cache", "--cache"},
	{"spares", "--spare"},
	{"properties.", "-O "},
	{"datasets", "--dataset"},
}

// PlanFromFlags builds and validates a plan from command-line flags. Errors
// name the flags.
func PlanFromFlags(f Flags) (*Plan, error) {
	p := &Plan{Pool: f.Pool, Ashift: f.Ashift, Mountpoint: f.Mountpoint, Cache: f.Cache, Spares: f.Spares}
	var errs Errors
	n := f.Vdevs
	if n <= 0 {
		n = 1
	}
	if len(f.Disks)%n != 0 {
		errs.add("DISK arguments", "%d disks cannot be split into %d vdevs of equal width", len(f.Disks), n)
	} else if len(f.Disks) > 0 {
		w := len(f.Disks) / n
		for i := 0; i < n; i++ {
			p.Vdevs = append(p.Vdevs, VdevSpec{Layout: f.Layout, Disks: append([]string(nil), f.Disks[i*w:(i+1)*w]...)})
		}
	}
	switch len(f.Log) {
	case 0:
	case 1:
		p.Log = []VdevSpec{{Layout: LayoutDisk, Disks: f.Log}}
	default:
		p.Log = []VdevSpec{{Layout: LayoutMirror, Disks: f.Log}}
	}
	for _, kv := range f.Properties {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			errs.add("-O "+kv, "want property=value, e.g. compression=zstd-1")
			continue
		}
		if p.Properties == nil {
			p.Properties = map[string]string{}
		}
		p.Properties[k] = v
	}
	if f.Normalization {
		if p.Properties == nil {
			p.Properties = map[string]string{}
		}
		p.Properties["normalization"] = "formD"
	}
	for _, ds := range f.Datasets {
		name, props, _ := strings.Cut(ds, ":")
		d := DatasetSpec{Name: name}
		if props != "" {
			d.Properties = map[string]string{}
			for _, kv := range strings.Split(props, ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					errs.add("--dataset "+ds, "want name:property=value,property=value, e.g. pictures:recordsize=1M")
					continue
				}
				if k == "mountpoint" {
					d.Mountpoint = v
					continue
				}
				d.Properties[k] = v
			}
		}
		p.Datasets = append(p.Datasets, d)
	}
	if f.Encrypt || f.Passphrase || f.KeyFile != "" {
		p.Encryption = &Encryption{Keyformat: KeyRaw, KeyFile: f.KeyFile}
		if f.Passphrase {
			p.Encryption.Keyformat = KeyPassphrase
		}
	}
	for _, e := range p.Validate() {
		path := e.Path
		for _, r := range flagPaths {
			if strings.HasPrefix(path, r.from) {
				path = r.to + strings.TrimPrefix(path, r.from)
				break
			}
		}
		errs = append(errs, &Error{Path: path, Problem: e.Problem})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}
