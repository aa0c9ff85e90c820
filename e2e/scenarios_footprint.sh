# scenarios_footprint.sh — the packaged zwatch's footprint with the guest's real pools (issue 19,
# item 5). Sourced by e2e/run.sh after scenarios.sh and scenarios_deb.sh (whose helpers it uses);
# sc_deb calls deb_footprint once the package's service reads the pools. That service runs as a
# person runs it: the package's unit, the default intervals (zpool list 10 s, status 1 min, SMART
# 30 min, datasets 5 min, ...), info logging, on the guest's pools and 14 disks. The e2e's own
# zwatch (2 s / 5 s intervals, debug) is paused meanwhile, so that the guest is as quiet as a NAS.
# Measured fresh, then after a series of incidents (a disk offline and online again, a scrub,
# zpool clear) and FP_QUIET seconds of quiet: resident memory (VmRSS, and its anonymous and
# file-backed parts) and CPU over 60 s. Checked: the memory zwatch owns (RssAnon) within
# FP_MAX_ANON_MIB fresh and after the incidents, VmRSS after the incidents back within
# FP_MAX_GROWTH_MIB of the fresh figure, and CPU within FP_MAX_CPU_PCT of one core on
# hardware-equivalent load. The guest's vCPU is emulated (TCG): its CPU time is scaled by the
# slowdown this run measures, the same parse timed in the guest and on the host.
# VmRSS itself is a figure, not a check: about half of it is the binary's clean code pages,
# which the kernel can drop at any time (docs/benchmarks.md, "Footprint with real pools").
# shellcheck shell=bash

FP_QUIET=${ZW_E2E_FP_QUIET:-120}
FP_MAX_ANON_MIB=20
# After the incidents VmRSS grew by 3-4 MiB in every run on 2026-12-03 (a JetStream block
# buffer stepping up, the code the incidents ran): 6 MiB leaves room for one run's noise
# and still fails the 15 MiB the issue measured before.
FP_MAX_GROWTH_MIB=6
FP_MAX_CPU_PCT=1

# fp_read: "rss_kb anon_kb file_kb cpu_ticks thp_kb" of the packaged zwatch (thp_kb: its
# anonymous memory in transparent huge pages; Debian's kernel has THP "always")
fp_read() {
  vm_run "p=\$(systemctl show -p MainPID --value zwatch); awk '/^(VmRSS|RssAnon|RssFile):/{printf \"%s \", \$2}' /proc/\$p/status; awk '{printf \"%s \", \$14+\$15}' /proc/\$p/stat; awk '/^AnonHugePages:/{print \$2}' /proc/\$p/smaps_rollup"
}

# fp_measure LABEL: VmRSS now and the CPU of the next 60 s, as figures; sets FP_RSS_KB,
# FP_ANON_KB, FP_CPU_HW
fp_measure() {
  local s=footprint label=$1 a b hz anon file t0 thp rss2 anon2 file2 t1 w0 w1
  w0=$(fp_work)
  a=$(fp_read) || { bad $s "read /proc of the packaged zwatch ($label)"; return 1; }
  sleep 60
  b=$(fp_read) || { bad $s "read /proc of the packaged zwatch ($label)"; return 1; }
  w1=$(fp_work)
  figure $s "$label: what the guest and zwatch did in those 60 s" "$(fp_work_delta "$w0" "$w1")" "" "kernel log lines (dmesg), zpool events, and zwatch_collector_runs_total per collector on the packaged zwatch's /metrics: a window that was not quiet shows here"
  hz=$(vm_run "getconf CLK_TCK")
  read -r FP_RSS_KB anon file t0 thp <<<"$a"
  FP_ANON_KB=$anon
  read -r rss2 anon2 file2 t1 _ <<<"$b"
  local guest_pct; guest_pct=$(awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN{printf "%.2f", 100 * d / hz / 60}')
  FP_CPU_HW=$(awk -v g="$guest_pct" -v f="$FP_SLOWDOWN" 'BEGIN{printf "%.2f", g / f}')
  figure $s "$label: VmRSS (anonymous + file pages)" "$((FP_RSS_KB / 1024)) ($((anon / 1024)) + $((file / 1024))), $((${thp:-0} / 1024)) of the anonymous in huge pages; $((rss2 / 1024)) a minute later" MiB "/proc/PID/status of the packaged zwatch.service, default intervals, info logging"
  figure $s "$label: CPU of zwatch itself over 60 s" "$guest_pct % of one emulated vCPU = $FP_CPU_HW" "% of one core, hardware-equivalent" "/proc/PID/stat utime+stime (not its zpool/smartctl children), divided by the TCG slowdown ($FP_SLOWDOWN x)"
}

# fp_work: "kmsg=N events=N collector=runs ..." now, for fp_work_delta
fp_work() {
  printf 'kmsg=%s events=%s ' "$(vm_run 'dmesg | wc -l')" "$(vm_run 'zpool events -H | wc -l')"
  deb_get /metrics 2>/dev/null | awk '/^zwatch_collector_runs_total\{/ { match($0, /collector="[^"]*"/); printf "%s=%s ", substr($0, RSTART + 11, RLENGTH - 12), $NF }'
}
# fp_work_delta BEFORE AFTER: "name +n" for each counter that moved
fp_work_delta() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], kv, "="); before[kv[1]] = kv[2] }
    n = split(b, y, " "); out = ""
    for (i = 1; i <= n; i++) { split(y[i], kv, "="); d = kv[2] - before[kv[1]]; if (d != 0) out = out (out == "" ? "" : ", ") kv[1] " +" d }
    print (out == "" ? "nothing" : out) }'
}

# fp_slowdown LABEL: how much slower the guest runs zwatch's code than this host (same parse,
# same input, in-process): the factor between emulated and real CPU time, measured before each
# window. The fastest of three timings on each side; on the host, also the fastest of the run
# so far: the host's figure stands for undisturbed hardware, and a moment of other load on it
# (one run timed 156 us where the others had 75-84) would shrink the factor and inflate the
# hardware-equivalent CPU. The guest's timing is this moment's: it moves with the guest's speed.
FP_HOST_US=
fp_slowdown() {
  local guest host
  if [ -z "$FP_HOST_US" ]; then
    g "zpool status -j --json-int -p -P > $G/out/fp-status.json" || return 1
  fi
  guest=$(vm_run "for i in 1 2 3; do parsecost status-json $G/out/fp-status.json 400; done | sort -n | head -1") || return 1
  host=$(for i in 1 2 3; do "$E2E_SHARE/bin/parsecost" status-json "$E2E_SHARE/out/fp-status.json" 400; done | sort -n | head -1) || return 1
  [[ $host =~ ^[0-9]+$ && $guest =~ ^[0-9]+$ ]] || return 1
  if [ -z "$FP_HOST_US" ] || (( host < FP_HOST_US )); then FP_HOST_US=$host; fi
  FP_SLOWDOWN=$(awk -v g="$guest" -v h="$FP_HOST_US" 'BEGIN{ if (h <= 0) exit 1; printf "%.1f", g / h }') || return 1
  figure footprint "$1: TCG slowdown, zfs.ParseStatusJSON of this guest's zpool status -j" "$guest us in the guest / $FP_HOST_US us on the host (this time $host) = $FP_SLOWDOWN" x "e2e/parsecost, fastest of 3 means of 400, same file; the host's fastest of the run"
}

deb_footprint() {
  local s=footprint e2e_pid t0 tn
  fp_slowdown fresh || { bad $s "measure the TCG slowdown (parsecost in the guest and on the host)"; return 1; }
  e2e_pid=$(vm_run "pgrep -f '^zwatch run --config $G/zwatch.yaml'") || { bad $s "find the e2e's own zwatch"; return 1; }
  g "kill -STOP $e2e_pid"
  # fresh: its first 100 s are start-up (the first SMART round of 14 disks under TCG)
  local age
  age=$(vm_run "systemctl show -p ActiveEnterTimestampMonotonic --value zwatch | awk -v u=\$(awk '{print \$1}' /proc/uptime) '{printf \"%d\", u - \$1/1e6}'")
  [[ $age =~ ^[0-9]+$ ]] || age=0
  (( age < 100 )) && sleep $((100 - age))
  fp_measure "fresh, $(( age < 100 ? 100 : age )) s after the start" || { g "kill -CONT $e2e_pid"; return 1; }
  local fresh_rss=$FP_RSS_KB fresh_anon=$FP_ANON_KB
  # incidents, each paged and resolved by the packaged zwatch
  t0=$(gnow)
  g "zpool offline vault $V_VD1"
  if tn=$(wait_note 60 --after "$t0" --status firing --contains "$V_VD1" --contains e2e-deb); then
    ok $s "the packaged zwatch pages a disk taken offline" "$(ms "$tn" "$t0") ms"
  else
    bad $s "the packaged zwatch pages a disk taken offline" "none within 60 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "zpool online vault $V_VD1 && zpool wait -t resilver vault"
  # The resolve may come inside a firing notification: when ZFS puts a new status on the pool
  # as the disk comes back (ZFS-8000-9P, errors counted during the resilver: seen once in a
  # full run, 2026-12-03), that alert fires in the same flush as the disk's resolve.
  if wait_note 120 --after "$t0" --alert VdevState=resolved --contains e2e-deb >/dev/null; then
    ok $s "and resolves it once the disk is back"
  else
    bad $s "the packaged zwatch resolves the offline disk" "none within 120 s"; dump_notes "$t0"
    g "zpool status -v vault > $G/out/footprint-unresolved.zpool-status.txt; journalctl -u zwatch --since '5 min ago' --no-pager > $G/out/footprint-unresolved.journal.txt" || true
  fi
  g "zpool scrub -w vault && zpool clear vault"
  ok $s "incidents played: offline, online and resilver, scrub, zpool clear"
  sleep "$FP_QUIET"
  fp_slowdown "after the incidents" || { bad $s "measure the TCG slowdown again"; g "kill -CONT $e2e_pid"; return 1; }
  fp_measure "after the incidents and $FP_QUIET s of quiet" || { g "kill -CONT $e2e_pid"; return 1; }
  g "kill -CONT $e2e_pid"
  (( fresh_anon <= FP_MAX_ANON_MIB * 1024 )) && ok $s "fresh: zwatch's own memory (RssAnon) within $FP_MAX_ANON_MIB MiB" "$((fresh_anon / 1024)) MiB" \
    || bad $s "fresh: zwatch's own memory (RssAnon) within $FP_MAX_ANON_MIB MiB" "$((fresh_anon / 1024)) MiB"
  (( FP_ANON_KB <= FP_MAX_ANON_MIB * 1024 )) && ok $s "after incidents: zwatch's own memory (RssAnon) within $FP_MAX_ANON_MIB MiB" "$((FP_ANON_KB / 1024)) MiB" \
    || bad $s "after incidents: zwatch's own memory (RssAnon) within $FP_MAX_ANON_MIB MiB" "$((FP_ANON_KB / 1024)) MiB"
  (( FP_RSS_KB <= fresh_rss + FP_MAX_GROWTH_MIB * 1024 )) && ok $s "after incidents and quiet: VmRSS back within $FP_MAX_GROWTH_MIB MiB of the fresh figure" "$((fresh_rss / 1024)) -> $((FP_RSS_KB / 1024)) MiB" \
    || bad $s "after incidents and quiet: VmRSS back within $FP_MAX_GROWTH_MIB MiB of the fresh figure" "$((fresh_rss / 1024)) -> $((FP_RSS_KB / 1024)) MiB"
  awk -v c="$FP_CPU_HW" -v m="$FP_MAX_CPU_PCT" 'BEGIN{exit !(c <= m)}' && ok $s "CPU after incidents within $FP_MAX_CPU_PCT % of one core (hardware-equivalent)" "$FP_CPU_HW %" \
    || bad $s "CPU after incidents within $FP_MAX_CPU_PCT % of one core (hardware-equivalent)" "$FP_CPU_HW %"
}
