package rules

import (
	"github.com/zwatch/zwatch/model/zfs"
)

// ZFS posts a state event (resource.fs.zfs.statechange, .removed) the
// moment a vdev changes state, a second or more before `zpool status`
// shows it: ZED acts on it, and so does the engine. It applies the event
// to the pool's last known tree (the latest status) and judges that tree
// at once, so the first page carries the severity, the by-id name, the
// serial and the guide the status would give. The status poll the event
// asks for then confirms: the same verdict is the same alerts (nothing is
// sent again); a different one updates them as any new status does.
//
// Only bad news travels this way. An event that a vdev came back (ONLINE)
// waits for the status: a disk that returns starts a resilver, and a page
// resolved on the event and raised again by the status would be a second
// page. An event naming a vdev the tree does not have (an unknown GUID and
// path, a pool not imported when the status was taken, no status yet)
// changes nothing: the poll pages as before.

// eventBadStates are the states a state event may bring early.
var eventBadStates = map[string]bool{
	zfs.StateDegraded: true, zfs.StateFaulted: true, zfs.StateOffline: true,
	zfs.StateRemoved: true, zfs.StateUnavail: true,
}

// stateEvent reports the state a state event says its vdev is now in, if
// it is one of the events that carry one and the news is bad.
func stateEvent(ev *zfs.Event) (string, bool) {
	switch ev.Class {
	case "resource.fs.zfs.statechange":
	case "resource.fs.zfs.removed":
		if ev.VdevState == "" {
			return zfs.StateRemoved, true
		}
	default:
		return "", false
	}
	return ev.VdevState, eventBadStates[ev.VdevState]
}

// applyStateEvent returns pools with the leaf ev names in state, its
// parents' and its pool's states worked out from their children as
// OpenZFS does (vdev_propagate_state), and ok; or pools unchanged and
// false when ev names no leaf of them or changes nothing. pools is not
// modified: the pool and the vdevs on the way to the leaf are copies, the
// rest is shared.
func applyStateEvent(pools []*zfs.Pool, ev *zfs.Event, state string) ([]*zfs.Pool, bool) {
	for i, p := range pools {
		if p == nil || !samePool(p, ev) {
			continue
		}
		np := *p
		for _, class := range []*[]*zfs.Vdev{&np.Vdevs, &np.Logs, &np.Special, &np.Dedup, &np.Spares, &np.Cache} {
			tops, changed := withLeafState(*class, ev, state)
			if !changed {
				continue
			}
			*class = tops
			np.State = worse(np.State, poolState(&np))
			if np.Root != nil {
				root := *np.Root
				root.State = np.State
				np.Root = &root
			}
			out := make([]*zfs.Pool, len(pools))
			copy(out, pools)
			out[i] = &np
			return out, true
		}
		return pools, false
	}
	return pools, false
}

// samePool: the event's pool GUID where both have one, else its name.
func samePool(p *zfs.Pool, ev *zfs.Event) bool {
	if p.GUID != "" && ev.PoolGUID != "" {
		return p.GUID == ev.PoolGUID
	}
	return ev.Pool != "" && p.Name == ev.Pool
}

// withLeafState returns vdevs with the leaf ev names set to state, copying
// the way down to it, and whether there was such a leaf to change.
func withLeafState(vdevs []*zfs.Vdev, ev *zfs.Event, state string) ([]*zfs.Vdev, bool) {
	for i, v := range vdevs {
		nv, changed := vdevWithLeafState(v, ev, state)
		if !changed {
			continue
		}
		out := make([]*zfs.Vdev, len(vdevs))
		copy(out, vdevs)
		out[i] = nv
		return out, true
	}
	return vdevs, false
}

func vdevWithLeafState(v *zfs.Vdev, ev *zfs.Event, state string) (*zfs.Vdev, bool) {
	if v.IsLeaf() {
		if !namesLeaf(ev, v) || worse(v.State, state) == v.State {
			return v, false
		}
		nv := *v
		nv.State = state
		return &nv, true
	}
	children, changed := withLeafState(v.Children, ev, state)
	if !changed {
		return v, false
	}
	nv := *v
	nv.Children = children
	nv.State = worse(v.State, interiorState(&nv))
	return &nv, true
}

// namesLeaf: the event's vdev GUID where both have one (zpool status -j
// and -g print it), else its path (-P prints the full path the event has).
func namesLeaf(ev *zfs.Event, l *zfs.Vdev) bool {
	if ev.VdevGUID != "" && l.GUID != "" {
		return ev.VdevGUID == l.GUID
	}
	return ev.VdevPath != "" && (ev.VdevPath == l.Path || ev.VdevPath == l.Was)
}

// interiorState is a mirror's, raidz's, dRAID's, replacing or spare vdev's
// state from its children's: unavailable when more of them are out than it
// tolerates, degraded when any is out or degraded.
func interiorState(v *zfs.Vdev) string {
	out, degraded := 0, 0
	for _, c := range v.Children {
		switch c.State {
		case zfs.StateOnline:
		case zfs.StateDegraded:
			degraded++
		default:
			out++
		}
	}
	tolerates := len(v.Children) - 1 // mirror, replacing, spare: one child is enough
	if v.Type == zfs.VdevRaidz || v.Type == zfs.VdevDraid {
		tolerates = v.Parity
		if tolerates == 0 {
			tolerates = parityFromName(v.Name)
		}
	}
	switch {
	case out > tolerates:
		return zfs.StateUnavail
	case out+degraded > 0:
		return zfs.StateDegraded
	}
	return zfs.StateOnline
}

// poolState is a pool's state from its top-level vdevs: a data, special or
// dedup vdev out makes it unavailable (zpool status then says so, or the
// pool suspends); any vdev of those or the logs not online degrades it.
// Cache and spares do not count.
func poolState(p *zfs.Pool) string {
	state := zfs.StateOnline
	for _, class := range [][]*zfs.Vdev{p.Vdevs, p.Special, p.Dedup} {
		for _, v := range class {
			switch v.State {
			case zfs.StateOnline:
			case zfs.StateDegraded:
				state = worse(state, zfs.StateDegraded)
			default:
				state = worse(state, zfs.StateUnavail)
			}
		}
	}
	for _, v := range p.Logs {
		if v.State != zfs.StateOnline {
			state = worse(state, zfs.StateDegraded)
		}
	}
	return state
}

// worse is the worse of two states: online, then degraded, then any
// state out of service (a state it does not know counts as that too).
// Between two states out of service, the first is kept.
func worse(a, b string) string {
	if stateRank(b) > stateRank(a) {
		return b
	}
	return a
}

func stateRank(s string) int {
	switch s {
	case zfs.StateOnline:
		return 0
	case zfs.StateDegraded:
		return 1
	}
	return 2
}
