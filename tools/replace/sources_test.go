package replace

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// Without ParseJSON only the text form is read.
func TestZpoolStatusTextOnly(t *testing.T) {
	text := readStatusFile(t, "openzfs-2.x-mirror-label-missing-4J-guid-was-part1.txt")
	r := &fakeRunner{answer: func([]string) (execx.Result, error) { return execx.Result{Stdout: text}, nil }}
	pools, err := ZpoolStatus{Runner: r}.Status(context.Background(), "tresor1")
	if err != nil || len(pools) != 1 || pools[0].Name != "tresor1" {
		t.Fatalf("pools %v err %v", pools, err)
	}
	if got := r.commands(); !slices.Equal(got, []string{"zpool status -p -s tresor1"}) {
		t.Errorf("commands %v", got)
	}
}

// An output that cannot be read is reported in the parser's own words, as
// before the collector's reader was shared.
func TestZpoolStatusParseErrorIsTheParsers(t *testing.T) {
	r := &fakeRunner{answer: func([]string) (execx.Result, error) { return execx.Result{Stdout: []byte("{not json")}, nil }}
	_, err := ZpoolStatus{Runner: r, ParseJSON: zfs.ParseStatusJSON}.Status(context.Background(), "")
	_, want := zfs.ParseStatusJSON(strings.NewReader("{not json"))
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("err %v, want %v", err, want)
	}
}
