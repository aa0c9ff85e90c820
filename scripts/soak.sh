#!/usr/bin/env bash
# Soak of `zwatch run` (docs/benchmarks.md, "Soak"): does memory come back
# down after incidents, and does it grow over time? The same stand-in
# zpool/zfs as scripts/footprint.sh, printing real OpenZFS 2.3.2 captures of
# testdata/captured/zfs-2.3.2 (its README says where each comes from), with
# every interval ten times shorter than the default (or the shortest the
# config accepts: import 1m, disks 10s, history raw points 1m), info logging,
# SMART off. The stand-in pools cycle through incidents: healthy for
# ZW_SOAK_HEALTHY seconds (default 120), then one of
#   b1-offline  (zpool offline of a raidz2 disk: vault DEGRADED),
#   d1-scrubbed (a scrub over a corrupted disk: CKSUM errors, pool ONLINE),
#   c4-missing  (a disk gone while exported: vault DEGRADED, disk by GUID)
# in turn for ZW_SOAK_INCIDENT seconds (default 60), and healthy again. During
# each incident the status page and its API are fetched once, as a person
# would; /metrics is fetched every 10 s for the heap figures, as Prometheus
# would scrape.
# Every 10 s one line goes into the TSV: seconds since start, phase, VmRSS,
# RssAnon, RssFile (KB), the Go heap in use, idle and released (KB, from
# /metrics), goroutines, CPU ticks used so far. At the end it prints the
# least-squares slope of RSS and of heap in use in KB/hour over the samples
# after the first ZW_SOAK_WARMUP seconds (default 300: JetStream and the
# history streams settle), RSS min/mean/max, RSS's peak in each quarter of
# those samples (a sawtooth whose peaks stay level is bounded), and the CPU
# used in % of one core.
# Usage: scripts/soak.sh [SECONDS] [BINARY]   (default 3600 s, bin/zwatch)
# The TSV, the slope summary and zwatch's log stay in ZW_SOAK_OUT (default a
# new directory under /tmp, printed). ZW_SOAK_PPROF=1 turns http.pprof on and
# saves heap profiles there after the warm-up and at the end (heap.warm.pb.gz,
# heap.end.pb.gz: go tool pprof -top -diff_base heap.warm.pb.gz heap.end.pb.gz).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-3600}
bin=$(realpath "${2:-bin/zwatch}")
healthy=${ZW_SOAK_HEALTHY:-120}
incident=${ZW_SOAK_INCIDENT:-60}
warmup=${ZW_SOAK_WARMUP:-300}
port=${ZW_SOAK_PORT:-18932}
out=${ZW_SOAK_OUT:-$(mktemp -d /tmp/zwatch-soak.XXXXXX)}
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d)
pid=
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; wait 2>/dev/null || true; rm -rf "$work"' EXIT
scripts/standins.sh "$work" phase # the phase file names the capture prefix: a (healthy) or an incident's
cat >"$work/cfg.yaml" <<YAML
host: soak
state_dir: $work/state
log: {level: info}
zfs: {zpool: $work/bin/zpool, zfs: $work/bin/zfs, list_interval: 1s, status_interval: 6s, arc_interval: 6s,
  datasets_interval: 30s, snapshots_interval: 90s, import_interval: 1m, version_interval: 144m}
smart: {enabled: false}
disks: {interval: 10s}
history: {raw_interval: 1m}
memory: {limit_mb: ${ZW_MEMORY_LIMIT_MB:-0}, settle_after: ${ZW_MEMORY_SETTLE_AFTER:-0s}}
http: {listen: 127.0.0.1:$port, pprof: $([ "${ZW_SOAK_PPROF:-0}" = 1 ] && echo true || echo false)}
YAML
"$bin" run --config "$work/cfg.yaml" >"$out/zwatch.log" 2>&1 &
pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 60); do # the listener is up once the bus and streams are
	curl -fsS -m 2 -o /dev/null "$base/metrics" 2>/dev/null && break
	sleep 1
done
heap() { [ "${ZW_SOAK_PPROF:-0}" = 1 ] && curl -fsS -m 30 -o "$out/heap.$1.pb.gz" "$base/debug/pprof/heap?gc=1" || true; }
metric() { awk -v m="$1" '$1 == m {printf "%d", $2 / 1024; found = 1} END {if (!found) printf "NA"}' "$work/metrics"; }
incidents=(b1-offline d1-scrubbed c4-missing)
tsv=$out/soak.tsv
printf 't_s\tphase\trss_kb\tanon_kb\tfile_kb\theap_inuse_kb\theap_idle_kb\theap_released_kb\tgoroutines\tcpu_ticks\n' >"$tsv"
start=$(date +%s)
n=0
phase=a
next_switch=$((start + healthy))
while :; do
	now=$(date +%s)
	t=$((now - start))
	[ "$t" -ge "$duration" ] && { heap end; break; }
	[ "$t" -ge "$warmup" ] && [ ! -e "$out/heap.warm.pb.gz" ] && heap warm
	kill -0 "$pid" 2>/dev/null || { echo "zwatch exited; its log: $out/zwatch.log" >&2; exit 1; }
	if [ "$now" -ge "$next_switch" ]; then
		if [ "$phase" = a ]; then
			phase=${incidents[$((n % ${#incidents[@]}))]}
			n=$((n + 1))
			next_switch=$((now + incident))
		else
			phase=a
			next_switch=$((now + healthy))
		fi
		echo "$phase" >"$work/phase"
	fi
	if [ "$phase" != a ] && [ "$((next_switch - now))" -le $((incident / 2)) ] && [ "$((next_switch - now))" -gt $((incident / 2 - 10)) ]; then
		for path in / "/api/host?host=soak"; do
			curl -fsS -m 10 -o /dev/null "$base$path" || echo "GET $path failed at $t s" >&2
		done
	fi
	curl -fsS -m 10 -o "$work/metrics" "$base/metrics" || : >"$work/metrics"
	read -r rss anon file < <(awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {print r, a, f}' /proc/$pid/status)
	ticks=$(awk '{print $14 + $15}' /proc/$pid/stat)
	printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$phase" "$rss" "$anon" "$file" \
		"$(metric go_memstats_heap_inuse_bytes)" "$(metric go_memstats_heap_idle_bytes)" \
		"$(metric go_memstats_heap_released_bytes)" "$(awk '$1 == "go_goroutines" {print $2}' "$work/metrics")" "$ticks" >>"$tsv"
	sleep $((10 - ($(date +%s) - now) % 10))
done
hz=$(getconf CLK_TCK)
awk -F'\t' -v warm="$warmup" -v hz="$hz" -v dur="$duration" -v incidents="$n" '
NR == 1 {next}
NR == 2 {t0 = $1; c0 = $10}
{tl = $1; cl = $10}
$1 >= warm && $6 != "NA" {
	k++; x = $1 / 3600; sx += x; sxx += x * x
	sr += $3; sxr += x * $3; sh += $6; sxh += x * $6
	if (min == "" || $3 < min) min = $3
	if ($3 > max) max = $3
	rss[k] = $3
}
END {
	if (k < 3) {print "too few samples after the warm-up for a slope"; exit 1}
	d = k * sxx - sx * sx
	printf "soak: %d s, %d incidents, %d samples after %d s of warm-up\n", dur, incidents, k, warm
	printf "RSS slope: %+.0f KB/hour (min %.1f MB, mean %.1f MB, max %.1f MB)\n", (k * sxr - sx * sr) / d, min / 1024, sr / k / 1024, max / 1024
	printf "heap in use slope: %+.0f KB/hour (mean %.1f MB)\n", (k * sxh - sx * sh) / d, sh / k / 1024
	# JetStream keeps the block being written in memory until it is full,
	# so RSS is a sawtooth: equal peaks are a bound, rising ones growth.
	printf "RSS peak per quarter of those samples:"
	for (q = 0; q < 4; q++) {
		qm = 0
		for (i = int(q * k / 4) + 1; i <= int((q + 1) * k / 4); i++) if (rss[i] > qm) qm = rss[i]
		printf "%s %.1f", (q ? " /" : ""), qm / 1024
	}
	printf " MB\n"
	printf "CPU: %.2f %% of one core over the run\n", 100 * (cl - c0) / hz / (tl - t0)
}' "$tsv" | tee "$out/summary.txt"
echo "samples: $tsv; log: $out/zwatch.log"
echo "ERROR lines in the log, critical notifications on the console left aside: $(grep -E 'level=ERROR' "$out/zwatch.log" | grep -cv 'msg=notification' || true)"
