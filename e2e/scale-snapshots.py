#!/usr/bin/env python3
"""scale-snapshots.py SEED N — a DERIVED snapshot listing of about N lines from a real one.

SEED is a real `zfs list -Hp -t snapshot -o name,creation,used -s creation` output (e.g.
testdata/captured/zfs-2.3.2/kbulk.zfs-list-snapshots.txt). Its sanoid-named lines
(autosnap_<date>_<label>) are repeated further back in time, one copy per span of the seed,
with the date in the name moved with the creation time, until about N lines; every other line is
kept once. The datasets stay the seed's, so the result is "the same box, snapshotting for longer".
Output keeps zfs's tab-separated columns and creation order. Used by e2e/run.sh (snapcost).
"""
import sys
import time


def main():
    seed, want = sys.argv[1], int(sys.argv[2])
    rows = [l.rstrip("\n").split("\t") for l in open(seed, encoding="utf-8") if l.strip()]
    sanoid = [r for r in rows if r[0].split("@", 1)[1].startswith("autosnap_")]
    others = [r for r in rows if r not in sanoid]
    if not sanoid:
        sys.exit("scale-snapshots: no sanoid-named (autosnap_) lines in " + seed)
    times = [int(r[1]) for r in sanoid]
    span = max(times) - min(times) + 3600
    out = [(int(r[1]), r[0], r[2]) for r in others]
    copies = max(1, (want - len(others)) // len(sanoid))
    for k in range(copies):
        for name, creation, used in sanoid:
            ds, snap = name.split("@", 1)
            c = int(creation) - k * span
            label = snap.rsplit("_", 1)[1]
            out.append((c, "%s@autosnap_%s_%s" % (ds, time.strftime("%Y-%m-%d_%H:%M:%S", time.gmtime(c)), label), used))
    out.sort(key=lambda r: r[0])
    w = sys.stdout.write
    for c, name, used in out:
        w("%s\t%d\t%s\n" % (name, c, used))


if __name__ == "__main__":
    main()
