package provision

import (
	"regexp"
	"sort"
	"strings"

	"github.com/zwatch/zwatch/model/disk"
)

// partitions lists a disk's partitions from sysfs.
func (s *inspector) partitions(kernel string) []string {
	var out []string
	for _, n := range readDirNames(s.h, "/sys/block/"+kernel) {
		if strings.HasPrefix(n, kernel) && exists(s.h, "/sys/block/"+kernel+"/"+n+"/partition") {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return partNum(out[i]) < partNum(out[j]) })
	return out
}

var reTrailingNum = regexp.MustCompile(`(\d+)$`)

// partNum is a partition's number, from the digits its name ends in.
func partNum(name string) int {
	m := reTrailingNum.FindString(name)
	n := 0
	for _, c := range m {
		n = n*10 + int(c-'0')
	}
	return n
}

// partDevice is how a partition is named in commands: its by-id -partN
// name when udev made one, else /dev/<name>.
func (s *inspector) partDevice(id disk.Identity, part string) string {
	if id.ByID != "" {
		n := strings.TrimPrefix(part, id.Kernel)
		n = strings.TrimPrefix(n, "p")
		cand := id.ByID + "-part" + n
		if exists(s.h, cand) {
			return cand
		}
	}
	return "/dev/" + part
}

// devNumbers maps "major:minor" of the disk and its partitions to names.
func (s *inspector) devNumbers(d *DiskInfo) map[string]string {
	out := map[string]string{}
	add := func(sysPath, name string) {
		b, err := s.h.ReadFile(sysPath + "/dev")
		if err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				out[v] = name
			}
		}
	}
	add("/sys/block/"+d.ID.Kernel, d.ID.Kernel)
	for _, p := range d.Partitions {
		add("/sys/block/"+d.ID.Kernel+"/"+p, p)
	}
	return out
}
