#!/usr/bin/env bash
# Idle footprint of `zwatch run` on a machine without ZFS (docs/benchmarks.md,
# "Idle footprint"): the embedded bus with JetStream on a fresh state dir, the
# ZFS collectors polling every 10 s against stand-in zpool/zfs scripts that
# print the real OpenZFS 2.3.2 outputs of testdata/captured/zfs-2.3.2/a.*
# (and k1/k7 for the datasets, snapshots and zpool import collectors, at
# their default intervals; l0 for zfs version), SMART off, the kernel log
# follower reading this machine's /dev/kmsg and the disk inventory its sysfs.
# Prints VmRSS/VmHWM after 32 s and 62 s and the CPU used between.
# The status page and /metrics listen on 127.0.0.1:18931; ZW_FOOTPRINT_HTTP=off turns them
# off, ZW_FOOTPRINT_HTTP=load also fetches the page, its API and /metrics 10 times each
# (one a second) from 20 s on, as a person and a Prometheus scraping every 15 s would.
# ZW_FOOTPRINT_INCIDENTS=1 then plays incidents on the stand-in pools (the
# captures b1-offline, d1-scrubbed and c4-missing in turn, 90 s each, the page,
# its API and /metrics fetched twice during each) and, back to healthy, prints
# VmRSS and the CPU of 30 s again after ZW_FOOTPRINT_QUIET seconds of quiet
# (default 360): does memory come back down once incidents are over?
# ZW_FOOTPRINT_PORT moves the listener (default 18931) to run two at once.
# At the end it prints the bytes in each JetStream stream's blocks.
# Usage: scripts/footprint.sh [BINARY]   (default bin/zwatch; build it first)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/zwatch}")
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
port=${ZW_FOOTPRINT_PORT:-18931}
scripts/standins.sh "$work" fixed # reads $work/phase: the capture prefix the stand-in zpool prints
cat >"$work/cfg.yaml" <<YAML
host: footprint
state_dir: $work/state
log: {level: warn}
zfs: {zpool: $work/bin/zpool, zfs: $work/bin/zfs, list_interval: 10s, status_interval: 10s}
smart: {enabled: false}
memory: {limit_mb: ${ZW_MEMORY_LIMIT_MB:-0}, settle_after: ${ZW_MEMORY_SETTLE_AFTER:-0s}}
YAML
http_mode=${ZW_FOOTPRINT_HTTP:-on}
case $http_mode in
off) echo 'http: {listen: ""}' >>"$work/cfg.yaml" ;;
bare) printf 'http: {listen: ""}\nhistory: {enabled: false}\n' >>"$work/cfg.yaml" ;;
on|load) echo "http: {listen: 127.0.0.1:$port}" >>"$work/cfg.yaml" ;;
*) echo "ZW_FOOTPRINT_HTTP: want on, off or load" >&2; exit 2 ;;
esac
"$bin" run --config "$work/cfg.yaml" >"$work/log" 2>&1 &
pid=$!
if [ "$http_mode" = load ]; then
	sleep 20
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		for path in / /api/host?host=footprint /metrics; do
			curl -fsS -o /dev/null "http://127.0.0.1:$port$path" || echo "GET $path failed" >&2
		done
		sleep 1
	done
	sleep 2
else
	sleep 32
fi
echo "after 32 s: $(grep -E "VmRSS|VmHWM|RssAnon|RssFile" /proc/$pid/status | tr -s ' \t\n' ' ')"
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
sleep 30
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
echo "after 62 s: $(grep -E "VmRSS|VmHWM|RssAnon|RssFile" /proc/$pid/status | tr -s ' \t\n' ' ')"
echo "CPU ticks in 30 s: $((t1 - t0)) of $((30 * $(getconf CLK_TCK)))"
if [ "${ZW_FOOTPRINT_INCIDENTS:-0}" = 1 ]; then
	for phase in b1-offline d1-scrubbed c4-missing; do
		echo "$phase" >"$work/phase"
		for _ in 1 2; do
			sleep 40
			if [ "$http_mode" = on ] || [ "$http_mode" = load ]; then
				for path in / /api/host?host=footprint /metrics; do
					curl -fsS -o /dev/null "http://127.0.0.1:$port$path" || echo "GET $path failed" >&2
				done
			fi
		done
		sleep 10
	done
	echo a >"$work/phase"
	echo "incidents over: $(grep -E "VmRSS|VmHWM|RssAnon|RssFile" /proc/$pid/status | tr -s ' \t\n' ' ')"
	sleep "${ZW_FOOTPRINT_QUIET:-360}"
	t0=$(awk '{print $14+$15}' /proc/$pid/stat)
	sleep 30
	t1=$(awk '{print $14+$15}' /proc/$pid/stat)
	echo "after $((${ZW_FOOTPRINT_QUIET:-360} + 30)) s of quiet: $(grep -E "VmRSS|VmHWM|RssAnon|RssFile" /proc/$pid/status | tr -s ' \t\n' ' ')"
	echo "CPU ticks in the last 30 s: $((t1 - t0)) of $((30 * $(getconf CLK_TCK)))"
	grep -c 'msg=notification' "$work/log" | sed 's/^/notifications logged: /' || true
fi
# What JetStream holds per stream (the block files): the facts stream is
# written on every poll, the state bucket when the rules change something,
# and the block being written stays in memory.
for d in "$work"/state/jetstream/jetstream/*/streams/*/; do
	echo "store $(basename "$d"): $(cat "$d"/msgs/*.blk 2>/dev/null | wc -c) bytes in blocks"
done
grep -E 'level=ERROR' "$work/log" || true
