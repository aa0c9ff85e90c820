#!/usr/bin/env bash
# run.sh — zwatch end to end on real OpenZFS (`make e2e`).
#
#   e2e/run.sh                  build zwatch + helpers (static), boot the 2.3.2 VM (image built or
#                               reused), run every scenario but live-2.1.11 in that one boot, check
#                               the captured 2.1.11 outputs, shut down, exit 1 on any FAIL
#   e2e/run.sh all              the same plus live-2.1.11 (a short boot of the 2.1.11 image)
#   e2e/run.sh --failed-of F    only the scenarios that failed in results file F (CI's second try)
#   e2e/run.sh SCENARIO...      only these, in the order given (provision is added first when a
#                               scenario needs the pool 'vault'). Names: provision offline unplug
#                               restart encrypted capacity replace scrub suspend stale locked unmounted
#                               keyfile interrupted missing forget snapcost readerr slowio nvme pollcost ackrepeat deb
#                               footprint captured-2.1.11 live-2.1.11
#
# Environment: ZW_E2E_OUT (results dir, default /var/tmp/zwatch-e2e-out), ZW_E2E_KEEP_VM=1 (leave the
# 2.3.2 VM running, e.g. to poke at it with `ZW_VM_DIR=/var/tmp/zwatch-e2e-run e2e/vm.sh run ...`),
# ZW_E2E_SKIP_LIVE21=1 (no 2.1.11 boot), plus vm.sh's (ZW_ACCEL, ZW_MEM, ...).
# Results: $ZW_E2E_OUT/results.tsv, figures.tsv, summary.txt, the sink's sink.jsonl, zwatch.log.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ZW_E2E_REPO=$(cd "$HERE/.." && pwd)
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
export ZW_E2E_OUT=${ZW_E2E_OUT:-/var/tmp/zwatch-e2e-out}
# own VM dirs: never touch a VM someone started with vm.sh/capture.sh in the default dir
VMDIR23=${ZW_E2E_VM_DIR:-/var/tmp/zwatch-e2e-run}
VMDIR21=${VMDIR23}-2.1.11
T_START=$(date +%s)

say() { printf '[e2e %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# zed_table FIGURES.tsv: zwatch's first page and zed's first mail about each fault side by side
# (versus_zed's figures), one row per fault; nothing when the run had none.
zed_table() {
  awk -F'\t' -v q="'" '
    function suffix(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
    { v[$1 SUBSEP $2] = $3 }
    suffix($2, "zwatch" q "s first page") {
      p = substr($2, 1, length($2) - length("zwatch" q "s first page")); k[++n] = $1 SUBSEP p
    }
    END {
      if (!n) exit
      print "zwatch and zed side by side (guest clock, ms from the fault; negative difference: zwatch first):"
      printf "%-10s %-14s %12s %12s %14s\n", "scenario", "fault", "zwatch page", "zed mail", "zwatch - zed"
      for (i = 1; i <= n; i++) {
        split(k[i], a, SUBSEP); p = a[2]; f = p; sub(/: $/, "", f); if (f == "") f = "first"
        z = v[a[1] SUBSEP p "zed" q "s first mail"]; d = v[a[1] SUBSEP p "zwatch" q "s page - zed" q "s mail"]
        printf "%-10s %-14s %12s %12s %14s\n", a[1], f, v[a[1] SUBSEP p "zwatch" q "s first page"], z == "" ? "-" : z, d == "" ? "-" : d
      }
    }' "$1"
}

DS_SCENARIOS=(stale locked unmounted keyfile interrupted missing forget snapcost)  # scenarios_datasets.sh
KERN_SCENARIOS=(readerr slowio)                                                    # scenarios_kernel.sh
ALL=(provision offline web unplug restart encrypted capacity replace scrub suspend "${DS_SCENARIOS[@]}" "${KERN_SCENARIOS[@]}" nvme pollcost ackrepeat deb footprint captured-2.1.11 live-2.1.11)
# The default run leaves out live-2.1.11: the 2.1.11 text path is checked on the outputs that
# image produced (captured-2.1.11, and the unit tests on testdata/captured/zfs-2.1.11), and a
# second image (its own module build when cold) and boot would cost 1.5 min warm, 6-15 min cold.
# web runs early: after the kernel scenarios the throttled pool keeps the guest's zpool slow.
# deb runs last in the VM, whatever the order given: the packaged zwatch pages the same sink.
# footprint measures that packaged zwatch (scenarios_footprint.sh), so it needs deb.
DEFAULT=(provision offline web unplug restart encrypted capacity replace scrub suspend "${DS_SCENARIOS[@]}" "${KERN_SCENARIOS[@]}" nvme pollcost ackrepeat deb footprint captured-2.1.11)
want=("$@"); [ ${#want[@]} -eq 0 ] && want=("${DEFAULT[@]}")
# --failed-of RESULTS.tsv: only the scenarios that failed in an earlier run (what they need is
# added below); a failure that is no scenario's own (boot, the datasets setup) runs them all.
if [ "${1:-}" = --failed-of ]; then
  [ -r "${2:-}" ] || { echo "--failed-of: cannot read results file '${2:-}'" >&2; exit 2; }
  mapfile -t want < <(awk -F'\t' '$3 == "FAIL" { print $1 }' "$2" | awk '!seen[$0]++')
  for w in "${want[@]}"; do
    case " ${ALL[*]} " in *" $w "*) ;; *) want=("${DEFAULT[@]}"); break ;; esac
  done
  [ ${#want[@]} -eq 0 ] && { echo "--failed-of: no failed scenario in $2" >&2; exit 0; }
  echo "rerunning the scenarios that failed in $2: ${want[*]}" >&2
fi
[ "${want[*]}" = all ] && want=("${ALL[@]}")
for w in "${want[@]}"; do
  case " ${ALL[*]} " in *" $w "*) ;; *) echo "unknown scenario '$w'; known: ${ALL[*]}" >&2; exit 2 ;; esac
done
has() { local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
needs_vault=0
for w in offline unplug restart replace scrub pollcost web footprint; do has $w && needs_vault=1; done
has restart && ! has unplug && want=(unplug "${want[@]}")   # restart is judged on the unplug alert
has replace && ! has unplug && want=(unplug "${want[@]}")   # replace runs the unplug alert's guide
has footprint && ! has deb && want=("${want[@]}" deb)          # footprint measures the packaged zwatch
[ $needs_vault = 1 ] && ! has provision && want=(provision "${want[@]}")
needs_ds=0
for w in "${DS_SCENARIOS[@]}"; do [ "$w" != snapcost ] && has "$w" && needs_ds=1; done
needs23=0
for w in "${want[@]}"; do case $w in captured-2.1.11|live-2.1.11) ;; *) needs23=1 ;; esac; done

# ---------------------------------------------------------------- build (host, static)
BIN=$(mktemp -d /tmp/zwatch-e2e-bin.XXXXXX)
say "building static zwatch, sink, parsecost"
( cd "$ZW_E2E_REPO" && export CGO_ENABLED=0 &&
  "$GO" build -trimpath -o "$BIN/zwatch" ./cmd/zwatch &&
  "$GO" build -trimpath -o "$BIN/sink" ./e2e/sink &&
  "$GO" build -trimpath -o "$BIN/parsecost" ./e2e/parsecost ) || { say "build failed"; exit 1; }
# The deb scenario installs the package (packaging/build-deb.sh) into the guest; a build that
# fails makes that scenario fail, not the others.
if has deb; then
  say "building the amd64 Debian package"
  if ( cd "$ZW_E2E_REPO" && DEB_ARCHES=amd64 DEB_OUT="$BIN/debs" GO="$GO" packaging/build-deb.sh ) > "$BIN/deb-build.log" 2>&1; then
    mv "$BIN"/debs/zwatch_*_amd64.deb "$BIN/zwatch_amd64.deb"
  else
    say "building the package failed:"; tail -20 "$BIN/deb-build.log" >&2
  fi
  rm -rf "$BIN/debs" "$BIN/deb-build.log"
fi
T_BUILT=$(date +%s)
# shellcheck source=scenarios_datasets.sh
source "$HERE/scenarios_datasets.sh"
# shellcheck source=scenarios_kernel.sh
source "$HERE/scenarios_kernel.sh"
E2E_DS_FOR=$(ds_known_alerts "$BIN/zwatch")$(kern_known_alerts "$BIN/zwatch"); export E2E_DS_FOR
mkdir -p "$ZW_E2E_OUT"
rm -f "$ZW_E2E_OUT"/*
: > "$ZW_E2E_OUT/results.tsv"; : > "$ZW_E2E_OUT/figures.tsv"

share_bins() { mkdir -p "$ZW_VM_DIR/share/bin" && cp "$BIN"/* "$ZW_VM_DIR/share/bin/"; }

# The 2.1.11 VM boots in the background once the 2.3.2 phase has ended (it touches $BIN/.boot21;
# it could do so earlier, but on 2 cores an overlapping TCG boot, and the idle 2.1.11 guest after
# it (~0.5 CPU), slowed the 2.3.2 scenarios by more than the overlap saved: measured 2026-11-30).
LIVE21=0; has live-2.1.11 && [ -z "${ZW_E2E_SKIP_LIVE21:-}" ] && LIVE21=1
BOOT21_PID=
if [ $LIVE21 = 1 ]; then
  (
    while [ ! -e "$BIN/.boot21" ]; do sleep 1; done
    t0=$(date +%s.%N)
    ZFS_VERSION=2.1.11 ZW_VM_DIR=$VMDIR21 "$HERE/vm.sh" boot > "$BIN/boot21.log" 2>&1
    rc=$?
    awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f\n", a-b}' > "$BIN/boot21.secs"
    exit $rc
  ) &
  BOOT21_PID=$!
  trap 'touch "$BIN/.boot21" 2>/dev/null; [ -n "$BOOT21_PID" ] && wait "$BOOT21_PID" 2>/dev/null; ZFS_VERSION=2.1.11 ZW_VM_DIR=$VMDIR21 "$HERE/vm.sh" shutdown >/dev/null 2>&1' EXIT
fi

# ---------------------------------------------------------------- the image (2-3 s when cached)
ZW_E2E_CACHE_NOTE=""
if [ $needs23 = 1 ]; then
  t_img=$(date +%s)
  ZW_E2E_IMAGE23=$(ZFS_VERSION=2.3.2 "$HERE/build-image.sh" | tail -1) || { say "VM image build failed"; exit 1; }
  t_img=$(( $(date +%s) - t_img ))
  if (( t_img > 5 )); then ZW_E2E_CACHE_NOTE=", VM image built in $(( t_img / 60 )) min $(( t_img % 60 )) s"; else ZW_E2E_CACHE_NOTE=", VM image cached"; fi
  printf 'run\t%s\t%s\t%s\t%s\n' "e2e/build-image.sh (2.3.2)" "$t_img" s "host clock; 2-3 s when cached (apt metadata lookups)" >> "$ZW_E2E_OUT/figures.tsv"
fi

# ---------------------------------------------------------------- OpenZFS 2.3.2: the scenarios
if [ $needs23 = 1 ]; then
  (
    export ZFS_VERSION=2.3.2 ZW_VM_DIR=$VMDIR23 ZW_E2E_IMAGE=${ZW_E2E_IMAGE23:-}
    # shellcheck source=vm.sh
    source "$HERE/vm.sh"
    # shellcheck source=scenarios.sh
    source "$HERE/scenarios.sh"
    # shellcheck source=scenarios_datasets.sh
    source "$HERE/scenarios_datasets.sh"
    # shellcheck source=scenarios_kernel.sh
    source "$HERE/scenarios_kernel.sh"
    # shellcheck source=scenarios_web.sh
    source "$HERE/scenarios_web.sh"
    # shellcheck source=scenarios_answer.sh
    source "$HERE/scenarios_answer.sh"
    # shellcheck source=scenarios_deb.sh
    source "$HERE/scenarios_deb.sh"
    # shellcheck source=scenarios_footprint.sh
    source "$HERE/scenarios_footprint.sh"
    cleanup() {
      e2e_teardown
      if [ -n "${ZW_E2E_KEEP_VM:-}" ]; then say "VM left running (ZW_VM_DIR=$ZW_VM_DIR)"; else vm_shutdown; fi
    }
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    if vm_running; then say "a VM is already running in $ZW_VM_DIR: stopping it"; vm_shutdown; fi
    t0=$(date +%s)
    vm_boot || { bad boot "VM boot (2.3.2)"; exit 1; }
    figure boot "2.3.2 VM boot to agent ready" "$ZW_BOOT_SECONDS" s "vm.sh boot ($(cat "$ZW_VM_DIR/accel"))"
    share_bins
    [ $needs_ds = 1 ] && ds_prepare   # before zwatch and the sink start: it sets the guest clock back
    e2e_setup || exit 1
    has nvme && sc_nvme_inject          # checked at the end: the SMART interval runs meanwhile
    for w in "${want[@]}"; do
      t_w=$(date +%s)
      case $w in
        provision) sc_provision ;;
        offline) sc_offline ;;
        unplug) sc_unplug ;;
        restart) has capacity && sc_capacity_start; sc_restart_begin ;;
        replace) sc_restart_check; sc_replace ;;
        scrub) sc_restart_check; sc_scrub ;;
        capacity) [ -n "${E2E_FILL_JOB:-}" ] || sc_capacity_start; sc_capacity_check ;;
        encrypted) sc_encrypted ;;
        suspend) sc_restart_check; sc_suspend ;;
        stale) sc_ds_stale ;;
        locked) sc_ds_locked ;;
        unmounted) sc_ds_unmounted ;;
        keyfile) sc_ds_keyfile ;;
        interrupted) sc_ds_interrupted ;;
        missing) sc_ds_missing ;;
        forget) has missing || sc_ds_missing; sc_ds_forget ;;
        snapcost) sc_ds_snapcost ;;
        readerr) sc_kern_readerr ;;
        slowio) sc_kern_slowio ;;
        web) sc_web ;;
        deb|footprint|ackrepeat) ;;   # last, below
      esac
      case $w in deb|footprint|ackrepeat) ;; *) figure run "scenario $w" "$(( $(date +%s) - t_w ))" s "host clock; its part of the run's wall time (CI has an hour for everything)" ;; esac
    done
    sc_restart_check
    has nvme && sc_nvme_check
    t_w=$(date +%s); has pollcost && sc_pollcost && figure run "scenario pollcost" "$(( $(date +%s) - t_w ))" s "host clock"
    t_w=$(date +%s); has ackrepeat && sc_ackrepeat; has ackrepeat && figure run "scenario ackrepeat" "$(( $(date +%s) - t_w ))" s "host clock"
    t_w=$(date +%s); has deb && sc_deb && figure run "scenario deb (with footprint when asked)" "$(( $(date +%s) - t_w ))" s "host clock"
    sc_destroyed
    has captured-2.1.11 && sc_captured_2111
    figure run "2.3.2 phase (boot, scenarios, before shutdown)" "$(( $(date +%s) - t0 ))" s "host clock"
    exit 0
  )
  touch "$BIN/.boot21"
else
  (
    export ZW_VM_DIR=$VMDIR23; source "$HERE/vm.sh"; source "$HERE/scenarios.sh"
    mkdir -p "$E2E_SHARE/bin"; cp "$BIN"/* "$E2E_SHARE/bin/"
    has captured-2.1.11 && sc_captured_2111
    exit 0
  )
fi

# ---------------------------------------------------------------- OpenZFS 2.1.11: live text fallback
if [ $LIVE21 = 1 ]; then
  touch "$BIN/.boot21"
  wait "$BOOT21_PID"; rc21=$?; BOOT21_PID=
  cat "$BIN/boot21.log" >&2
  (
    export ZFS_VERSION=2.1.11 ZW_VM_DIR=$VMDIR21
    source "$HERE/vm.sh"
    source "$HERE/scenarios.sh"
    trap 'vm_shutdown' EXIT
    trap 'exit 130' INT TERM
    if [ "$rc21" != 0 ] || ! vm_running; then bad live-2.1.11 "VM boot (2.1.11)"; exit 1; fi
    figure boot "2.1.11 VM boot to agent ready (starts while the 2.3.2 VM shuts down)" "$(cat "$BIN/boot21.secs")" s "vm.sh boot ($(cat "$ZW_VM_DIR/accel"))"
    share_bins
    sc_live_2111
    exit 0
  )
fi

rm -rf "$BIN"
T_END=$(date +%s)
printf 'run\t%s\t%s\t%s\t%s\n' "whole e2e/run.sh ${*:-(default scenarios)}" "$(( T_END - T_START ))" s "host clock, build $(( T_BUILT - T_START )) s" >> "$ZW_E2E_OUT/figures.tsv"
{
  echo "zwatch e2e $(date -u +%FT%TZ): $(( T_END - T_START )) s total (build $(( T_BUILT - T_START )) s)"
  echo
  column -t -s $'\t' "$ZW_E2E_OUT/results.tsv"
  echo
  zed_table "$ZW_E2E_OUT/figures.tsv" && echo
  echo "figures:"
  column -t -s $'\t' "$ZW_E2E_OUT/figures.tsv"
} > "$ZW_E2E_OUT/summary.txt"
cat "$ZW_E2E_OUT/summary.txt" >&2
n_pass=$(awk -F'\t' '$3=="PASS"' "$ZW_E2E_OUT/results.tsv" | wc -l)
n_fail=$(awk -F'\t' '$3=="FAIL"' "$ZW_E2E_OUT/results.tsv" | wc -l)
# The failed checks once more, last: a CI log is often read from its end.
(( n_fail > 0 )) && awk -F'\t' '$3=="FAIL" { printf "FAILED %s: %s (%s)\n", $1, $2, $4 }' "$ZW_E2E_OUT/results.tsv" >&2
say "$n_pass passed, $n_fail failed, $(( T_END - T_START )) s; results in $ZW_E2E_OUT"

# With ZW_E2E_DOCS=1, a full run that passed writes its figures into docs/benchmarks.md (between
# the markers), so the figures there always come from one whole run with the command that produced
# it. Without it, and for subset or failed runs, the tracked tree is left as it was.
write_docs() {
  local doc=$ZW_E2E_REPO/docs/benchmarks.md begin='<!-- BEGIN e2e/run.sh figures -->' end='<!-- END e2e/run.sh figures -->'
  grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { say "docs/benchmarks.md has no e2e markers; not written"; return 0; }
  local cmd="make e2e" img="$ZW_E2E_CACHE_NOTE"
  [ "${want[*]}" = "${ALL[*]}" ] && cmd="make e2e E2E_ARGS=all"
  {
    echo "$begin"
    echo "Written by \`e2e/run.sh\` after a full run that passed: \`ZW_E2E_DOCS=1 $cmd\`, $(date -u '+%Y-%m-%d %H:%M') UTC,"
    echo "$n_pass of $n_pass checks passed, **$(( (T_END - T_START) / 60 )) min $(( (T_END - T_START) % 60 )) s** in all (build $(( T_BUILT - T_START )) s$img);"
    echo "accelerator $(cat "$VMDIR23/accel" 2>/dev/null || echo '?'), host $(nproc) cores. Guest clock unless the last column says otherwise."
    echo
    echo "| scenario | figure | value | unit | how measured |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '{ for (i = 1; i <= NF; i++) gsub(/\|/, "\\|", $i); printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$ZW_E2E_OUT/figures.tsv"
    echo "$end"
  } > "$ZW_E2E_OUT/benchmarks-block.md"
  awk -v b="$begin" -v e="$end" -v f="$ZW_E2E_OUT/benchmarks-block.md" '
    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
    $0 == e { skip = 0; next }
    !skip' "$doc" > "$doc.tmp" && mv "$doc.tmp" "$doc"
  say "figures written to docs/benchmarks.md"
}
if [ "$n_fail" = 0 ] && [ "$n_pass" -gt 0 ] && [ "${ZW_E2E_DOCS:-0}" = 1 ] \
   && { [ "${want[*]}" = "${DEFAULT[*]}" ] || [ "${want[*]}" = "${ALL[*]}" ]; }; then
  write_docs
fi
[ "$n_fail" = 0 ] && [ "$n_pass" -gt 0 ]
