#!/usr/bin/env bash
# Writes the stand-in zpool and zfs of scripts/footprint.sh and scripts/soak.sh
# into DIR/bin: they print the real OpenZFS 2.3.2 captures of
# testdata/captured/zfs-2.3.2, the pool ones under the prefix DIR/phase names
# (a: healthy; b1-offline, d1-scrubbed, c4-missing: incidents). With mode
# phase the zfs list of pools follows the phase too; with fixed (the default) it
# stays the healthy one.
# Usage: scripts/standins.sh DIR [fixed|phase]
set -euo pipefail
dir=$(realpath "$1")
cap=$(realpath "$(dirname "$0")/../testdata/captured/zfs-2.3.2")
case ${2:-fixed} in
fixed) list="$cap/a.zfs-list-Hp.txt" ;;
phase) list="$cap/\$p.zfs-list-Hp.txt" ;;
*) echo "usage: standins.sh DIR [fixed|phase]" >&2; exit 2 ;;
esac
mkdir -p "$dir/bin"
[ -f "$dir/phase" ] || echo a >"$dir/phase"
cat >"$dir/bin/zpool" <<SH
#!/bin/sh
p=\$(cat $dir/phase)
case "\$1 \$2" in
"status -j") exec cat $cap/\$p.zpool-status-j.json ;;
"status "*) exec cat $cap/\$p.zpool-status-p-P.txt ;;
"list -Hp") exec cat $cap/\$p.zpool-list-Hp.txt ;;
"list -H") exec cut -f1 $cap/\$p.zpool-list-Hp.txt ;;
"events -f") exec sleep 100000 ;;
"events "*) exit 0 ;;
"import "*|"import ") cat $cap/k7-none.zpool-import.txt.stderr >&2; exit 1 ;;
esac
exit 0
SH
cat >"$dir/bin/zfs" <<SH
#!/bin/sh
p=\$(cat $dir/phase)
case "\$*" in
"version -j") exec cat $cap/l0-version.zfs-version-j.json ;;
"version") exec cat $cap/l0-version.zfs-version.txt ;;
"list -Hp -t filesystem,volume "*) exec cat $cap/k1-healthy.zfs-list-datasets.txt ;;
"list -Hp -t snapshot "*) exec cat $cap/k1-healthy.zfs-list-snapshots.txt ;;
esac
exec cat $list
SH
chmod +x "$dir/bin/zpool" "$dir/bin/zfs"
