package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwatch/zwatch/model/zfs"
)

// Whatever zpool events prints (or a crafted line claims), a state event
// changes at most the one leaf whose GUID or path it names, only for the
// worse, in the pool it names, and nothing panics: an event about a disk
// the tree does not have never pages another one.
func FuzzStateEventOnTheKnownTree(f *testing.F) {
	for _, name := range []string{"l1-scsi-unplug.zpool-events-v.txt", "l4-read-errors.zpool-events-v.txt", "l2-virtio-unplug.zpool-events-v.txt"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", captured, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("Dec  1 2026 18:28:52.248000000 resource.fs.zfs.statechange\n        class = \"resource.fs.zfs.statechange\"\n        pool = \"kscsi\"\n        vdev_guid = 0x1\n        vdev_state = \"FAULTED\" (0x5)\n"))
	tree, err := os.ReadFile(filepath.Join("..", "testdata", captured, "l1-scsi-unplug.zpool-status-j.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before, err := zfs.ParseStatus(tree)
		if err != nil {
			t.Fatal(err)
		}
		_ = zfs.ParseEvents(bytes.NewReader(data), func(ev zfs.Event) error {
			state, ok := stateEvent(&ev)
			if !ok {
				return nil
			}
			after, changed := applyStateEvent(before, &ev, state)
			for i, p := range after {
				if !changed && p != before[i] {
					t.Fatalf("pool %s replaced though nothing changed", p.Name)
				}
				old := leavesByName(before[i])
				for _, cv := range p.AllVdevs() {
					for _, l := range cv.Vdev.Leaves() {
						was := old[l.Name]
						if was == nil || was.State == l.State {
							continue
						}
						if !samePool(before[i], &ev) || !namesLeaf(&ev, was) {
							t.Fatalf("event %+v changed leaf %s (guid %s path %s) of %s", ev, l.Name, was.GUID, was.Path, p.Name)
						}
						if stateRank(l.State) < stateRank(was.State) {
							t.Fatalf("event made %s better: %s → %s", l.Name, was.State, l.State)
						}
					}
				}
			}
			return nil
		})
	})
}

func leavesByName(p *zfs.Pool) map[string]*zfs.Vdev {
	out := map[string]*zfs.Vdev{}
	for _, cv := range p.AllVdevs() {
		for _, l := range cv.Vdev.Leaves() {
			out[l.Name] = l
		}
	}
	return out
}
