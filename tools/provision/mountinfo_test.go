package provision

import (
	"reflect"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	data := []byte(`22 1 8:17 / / rw,relatime shared:1 - ext4 /dev/sdb1 rw
36 22 8:18 / /mnt/my\040disk rw,relatime - xfs /dev/disk/by-id/ata-X-part2 rw
37 22 0:5 / /dev rw - devtmpfs udev rw
short line - x
`)
	want := []mountEntry{
		{devNumber: "8:17", mountPoint: "/", source: "/dev/sdb1"},
		{devNumber: "8:18", mountPoint: "/mnt/my disk", source: "/dev/disk/by-id/ata-X-part2"},
		{devNumber: "0:5", mountPoint: "/dev", source: "udev"},
	}
	if got := parseMountinfo(data); !reflect.DeepEqual(got, want) {
		t.Errorf("parseMountinfo =\n%+v\nwant\n%+v", got, want)
	}
}
