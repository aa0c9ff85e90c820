#!/usr/bin/env bash
# scenarios.sh — zwatch end-to-end scenarios against real OpenZFS in the e2e VM.
#
# Sourced by e2e/run.sh (which boots the VM, builds and shares the binaries and calls
# the functions below); can also be sourced by hand against a VM booted with e2e/vm.sh:
#
#   source e2e/vm.sh; source e2e/scenarios.sh; e2e_setup; sc_provision; sc_offline
#
# Every scenario asserts what a person receives: the JSON bodies zwatch's webhook channel
# POSTs to the sink (e2e/sink) running in the guest, which appends one line per body to
# $ZW_VM_DIR/share/out/sink.jsonl ({"recv_ns": guest receive time, "payload": ...}).
# Latencies are measured on the guest clock (sink receive time minus a guest timestamp
# taken right before the fault), unless said otherwise.
#
# Results: $E2E_OUT/results.tsv (scenario, check, PASS/FAIL, detail) and
# $E2E_OUT/figures.tsv (scenario, metric, value, unit, how).

E2E_SHARE=$ZW_VM_DIR/share
E2E_OUT=${ZW_E2E_OUT:-/var/tmp/zwatch-e2e-out}
E2E_SINK=$E2E_SHARE/out/sink.jsonl
E2E_FAILS=${E2E_FAILS:-0}
G=/mnt/host                # the share, as the guest sees it
D=/dev/disk/by-id
# vault: raidz2 over six disks of three kinds (as in capture.sh step a)
V_SD1_ARG=scsi-35000c500a0000001 # hot-unplugged (qdev sd1); named so on the provision command line,
V_SD1=wwn-0x5000c500a0000001     # ... and zwatch provision prefers the wwn- name of the same disk
V_SD2=wwn-0x5000c500a0000002
V_VD1=virtio-ZWV0001             # offline/online
V_VD2=virtio-ZWV0002             # corrupted
V_ATA1=ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001
V_ATA2=ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000002
SPARE=wwn-0x5000c500a0000003     # the replacement (qdev sd3)
SMALL=virtio-ZWV0006             # 2 GiB: capacity pool

say() { printf '[e2e %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
ok() { # scenario check detail
  printf '%s\t%s\tPASS\t%s\n' "$1" "$2" "${3:-}" >> "$E2E_OUT/results.tsv"
  say "PASS $1: $2${3:+ ($3)}"
}
bad() {
  printf '%s\t%s\tFAIL\t%s\n' "$1" "$2" "${3:-}" >> "$E2E_OUT/results.tsv"
  say "FAIL $1: $2${3:+ ($3)}"
  E2E_FAILS=$((E2E_FAILS + 1))
}
check() { # scenario check command... : PASS if the command succeeds
  local s=$1 c=$2; shift 2
  if "$@"; then ok "$s" "$c"; else bad "$s" "$c"; fi
}
figure() { # scenario metric value unit how
  printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$E2E_OUT/figures.tsv"
  say "FIGURE $1: $2 = $3 $4"
}
g() { # run a guest command; print its output on failure
  local o rc; o=$(vm_run "$1" 2>&1); rc=$?
  [ $rc -ne 0 ] && { say "guest command failed rc=$rc: $1"; printf '%s\n' "$o" | tail -20 >&2; }
  return $rc
}
gnow() { vm_run 'date +%s%N'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.0f", (a-b)/1e6}'; }
sink() { "$E2E_SHARE/bin/sink" find "$E2E_SINK" "$@"; }

# wait_note TIMEOUT_S FIND-ARGS... : wait until the sink holds a matching notification;
# prints its guest receive time (ns); status 1 on timeout
wait_note() {
  local t=$1 r end; shift
  end=$(( $(date +%s) + t ))
  while :; do
    if r=$(sink "$@"); then echo "${r%% *}"; return 0; fi
    (( $(date +%s) >= end )) && return 1
    sleep 0.1
  done
}

# zed_mail TIMEOUT_S AFTER_NS REGEX: wait until zed has mailed (its recorder, e2e_setup) with a
# subject matching REGEX after AFTER_NS (guest clock); prints the guest time it was called
zed_mail() {
  local t=$1 after=$2 re=$3 end r
  end=$(( $(date +%s) + t ))
  while :; do
    r=$(awk -F'\t' -v a="$after" -v re="$re" '$1 > a && $2 ~ re { print $1; exit }' "$E2E_SHARE/out/zed-mail.tsv" 2>/dev/null)
    [ -n "$r" ] && { echo "$r"; return 0; }
    (( $(date +%s) >= end )) && return 1
    sleep 0.2
  done
}

# versus_zed SCENARIO PAGE_NS FAULT_NS REGEX [figure [WHAT]]: zwatch's page and zed's mail about the
# same fault, side by side (guest clock): a FAIL when zed told first; with "figure", only the figures
# (faults where zwatch being first is not yet a promise); WHAT names a second fault of a scenario.
# run.sh's summary lists them as a table (zed_table).
versus_zed() {
  local s=$1 tn=$2 t0=$3 re=$4 mode=${5:-check} p=${6:+$6: } tz
  figure "$s" "${p}zwatch's first page" "$(ms "$tn" "$t0")" ms "guest clock: fault -> page in the sink"
  if tz=$(zed_mail 15 "$((t0 - 1000000000))" "$re"); then
    figure "$s" "${p}zed's first mail" "$(ms "$tz" "$t0")" ms "guest clock: fault -> zed calls ZED_EMAIL_PROG"
    figure "$s" "${p}zwatch's page - zed's mail" "$(ms "$tn" "$tz")" ms "guest clock: negative = zwatch first; goal at most -300"
    if [ "$mode" = figure ]; then :
    elif (( tn < tz )); then ok "$s" "zwatch paged before zed mailed" "$(ms "$tz" "$tn") ms ahead; goal 300 ms $( (( tz - tn >= 300000000 )) && echo met || echo 'NOT met')"
    else bad "$s" "zwatch paged before zed mailed" "zed first by $(ms "$tn" "$tz") ms"; fi
  else
    figure "$s" "${p}zed's first mail" "none" "" "within 15 s (zed mails nothing for this)"
  fi
}

# quiet SECONDS: wait until the sink has received no page (a firing notification) for SECONDS
# (guest clock). zwatch sends the first news of a group at once only when the group had no page
# for group_wait (10 s); news for a recently paged group waits up to group_wait so a cascade
# becomes one follow-up. A "resolved" notice does not open that window (rules/lifecycle.go), so
# it is not waited out. The latency scenarios start from a quiet group, as a real first failure does.
quiet() {
  local want=$1 last now
  while :; do
    last=$(jq -r 'select(.payload.status == "firing") | .recv_ns' "$E2E_SINK" 2>/dev/null | tail -1); last=${last:-0}
    now=$(gnow)
    (( (now - last) / 1000000000 >= want )) && return 0
    sleep $(( want - (now - last) / 1000000000 ))
  done
}

# latency ceiling for the person-facing paths (offline, unplug): a FAIL above it. The issue's
# target is 2 s with event following; under TCG (this machine: no usable KVM) every zpool call
# is 10-50x slower, so the default ceiling is looser and the target is reported beside it.
E2E_MAX_LATENCY_MS=${ZW_E2E_MAX_LATENCY_MS:-8000}
E2E_TARGET_MS=2000
budget() { # scenario what ms
  if (( $3 <= E2E_MAX_LATENCY_MS )); then ok "$1" "$2 within the ${E2E_MAX_LATENCY_MS} ms ceiling" "$3 ms; target ${E2E_TARGET_MS} ms $( (( $3 <= E2E_TARGET_MS )) && echo met || echo 'NOT met')"
  else bad "$1" "$2 within the ${E2E_MAX_LATENCY_MS} ms ceiling" "$3 ms"; fi
}

# legs SCENARIO SINK-JSON RECEIVED-NS: the page's latency budget leg by leg, from the timing
# zwatch put in the notification (alert.Timing: ZFS's event time, read, stored by the stream,
# judged, handed to the outbox; all guest clock) and the sink's receive time
legs() {
  local s=$1 j=$2 tn=$3 prev="" prevt="" name t
  for name in event read published judged outbox; do
    t=$(jq -r ".notification.timing.$name // empty" <<<"$j")
    [ -n "$t" ] || continue
    t=$(date -d "$t" +%s%N) || continue
    [ -n "$prev" ] && figure "$s" "leg: $prev -> $name" "$(ms "$t" "$prevt")" ms "guest clock: the notification's timing"
    prev=$name prevt=$t
  done
  if [ -n "$prev" ]; then
    figure "$s" "leg: $prev -> sink" "$(ms "$tn" "$prevt")" ms "guest clock: the notification's timing -> sink receive"
  else
    bad "$s" "the page carries its timing (notification.timing)" "$(jq -c .notification.timing <<<"$j")"
  fi
}

dump_notes() { # after-ns: the notifications since then, compact, for the log
  sink --after "$1" --json 2>/dev/null | jq -c '{status, severity, summary, alerts: [.notification.alerts[] | "\(.name)/\(.state)/\(.severity) \(.summary)"]}' >&2
}

# ------------------------------------------------------------------ setup
e2e_config() {
  cat <<EOF
host: e2e
state_dir: /var/lib/zwatch-e2e
log: {level: ${ZW_E2E_LOG_LEVEL:-debug}, format: text}
zfs:
  list_interval: 2s
  status_interval: 5s
  follow_events: true
$(declare -F e2e_config_datasets >/dev/null && e2e_config_datasets)
smart:
  interval: 1m
# history.raw_interval's minimum: a raw point per pool and disk each minute, so the pool made by
# provision has points when the web scenario asks a few minutes later (default 5m: one slot later)
history: {raw_interval: 1m}
rules:
  # PoolCapacity holds 5m by default before it fires; the capacity scenario would wait that long.
  # E2E_DS_FOR: the issue-15 alerts the built zwatch knows, at 0s too (scenarios_datasets.sh)
  for: {PoolCapacity: 0s${E2E_DS_FOR:-}}
$([ -n "${E2E_REPEAT:-}" ] && printf '  # the ackrepeat scenario: repeats within its run (scenarios_answer.sh)\n  repeat_warning: %s\n  repeat_critical: %s\n' "$E2E_REPEAT" "$E2E_REPEAT")
$(declare -F e2e_config_datasets_rules >/dev/null && e2e_config_datasets_rules)
notify:
  console: true
  channels:
    - name: sink
      type: webhook
      url: http://127.0.0.1:9099/zwatch
      min_severity: info
    # the sink's Telegram fake (e2e/sink/telegram.go, scenarios_answer.sh)
    - name: phone
      type: telegram
      token: "123456:ABC-e2e-fake"
      chat_ids: ["42"]
      api_url: http://127.0.0.1:9099/tg
      answer_users: ["123456789"]
# the replace scenario replaces the unplugged disk from the phone (scenarios_answer.sh)
actions: {replace: true}
EOF
}

# e2e_setup: binaries are in $E2E_SHARE/bin (run.sh puts them there); start sink + zwatch
e2e_setup() {
  mkdir -p "$E2E_OUT" "$E2E_SHARE/out"
  touch "$E2E_OUT/results.tsv" "$E2E_OUT/figures.tsv"
  e2e_config > "$E2E_SHARE/zwatch.yaml"
  # Onto the guest's own disk, as an install would put them: a program run from the 9p share is
  # read over 9p at every start (seconds under TCG for zwatch's 35 MB).
  g "install -m 0755 $G/bin/zwatch $G/bin/sink $G/bin/parsecost /usr/local/bin/" || { bad setup "install the binaries in the guest"; return 1; }
  g "zwatch check-config $G/zwatch.yaml >/dev/null" || { bad setup "zwatch check-config"; return 1; }
  # zed is part of the real setup (it onlines a re-plugged disk, attaches spares): it must run.
  # Its unit only has ConditionPathIsDirectory=/sys/module/zfs, no ordering after the module load,
  # so with vm.sh's fast boot (import units masked) it may have skipped itself: start it.
  # Without the two zedlets that run for every data ereport (all-syslog.sh logs each event,
  # data-notify.sh would mail it): a suspended pool posts 1,000-8,400 of them, and two shells per
  # event under TCG kept the guest busy for up to 15 minutes after the suspend scenario (on
  # hardware seconds). zed's own work (onlining, spares, LEDs) is unchanged.
  # zed mails as a box with both would have it, to a recorder of the guest time it was called and
  # the subject ($G/out/zed-mail.tsv), so a fault scenario can say who told the person first
  # (zed_mail); ZED_NOTIFY_INTERVAL_SECS is its default, one mail per vdev and class an hour.
  printf '%s\n' '#!/bin/sh' "t=\$(date +%s%N); cat >/dev/null; printf '%s\\t%s\\n' \"\$t\" \"\$*\" >> $G/out/zed-mail.tsv" > "$E2E_SHARE/zed-mail"
  g "install -m 0755 $G/zed-mail /usr/local/bin/zed-mail && sed -i -E '/^#?(ZED_EMAIL_ADDR|ZED_EMAIL_PROG|ZED_EMAIL_OPTS|ZED_NOTIFY_INTERVAL_SECS)=/d' /etc/zfs/zed.d/zed.rc && printf '%s\n' 'ZED_EMAIL_ADDR=\"root\"' 'ZED_EMAIL_PROG=\"/usr/local/bin/zed-mail\"' \"ZED_EMAIL_OPTS=\\\"'@SUBJECT@'\\\"\" 'ZED_NOTIFY_INTERVAL_SECS=3600' >> /etc/zfs/zed.d/zed.rc" \
    || { bad setup "zed's mail recorder"; return 1; }
  g "rm -f /etc/zfs/zed.d/all-syslog.sh /etc/zfs/zed.d/data-notify.sh; systemctl restart zfs-zed; for i in \$(seq 100); do systemctl is-active -q zfs-zed && exit 0; sleep 0.2; done; exit 1" \
    || { bad setup "zfs-zed running in the guest"; return 1; }
  E2E_SINK_JOB=$(vm_spawn "exec sink serve 127.0.0.1:9099 $G/out/sink.jsonl 2>>$G/out/sink.log")
  g "for i in \$(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/9099) 2>/dev/null && exit 0; sleep 0.1; done; exit 1" \
    || { bad setup "sink listening"; return 1; }
  zw_start
}

zw_start() {
  E2E_ZW_JOB=$(vm_spawn "exec zwatch run --config $G/zwatch.yaml >>$G/out/zwatch.log 2>&1")
  # ready when the first healthy status poll is logged or the process has been up 5 s
  g "for i in \$(seq 10); do pgrep -x zwatch >/dev/null || exit 1; sleep 0.2; done" || { bad setup "zwatch stays up"; tail -20 "$E2E_SHARE/out/zwatch.log" >&2; return 1; }
}

zw_stop() { vm_stop "$E2E_ZW_JOB" >/dev/null 2>&1; }

e2e_teardown() {
  [ -n "${E2E_ZW_JOB:-}" ] && zw_stop
  [ -n "${E2E_SINK_JOB:-}" ] && vm_stop "$E2E_SINK_JOB" >/dev/null 2>&1
  cp -f "$E2E_SHARE/out/"* "$E2E_OUT/" 2>/dev/null
  return 0
}

# ------------------------------------------------------------------ scenarios
# 1. provision vault
sc_provision() {
  local s=provision t0 t1
  t0=$(date +%s%N)
  vm_run "zwatch provision --pool vault --layout raidz2 $D/$V_SD1_ARG $D/$V_SD2 $D/$V_VD1 $D/$V_VD2 $D/$V_ATA1 $D/$V_ATA2 --dataset pictures:recordsize=1M,compression=lz4 --dataset storage --dataset backup:compression=zstd-1 --apply --yes" \
    > "$E2E_OUT/provision.out" 2>&1
  local rc=$?; t1=$(date +%s%N)
  [ $rc = 0 ] && ok $s "zwatch provision --apply exit 0" || { bad $s "zwatch provision --apply exit 0" "rc=$rc, see provision.out"; tail -30 "$E2E_OUT/provision.out" >&2; return 1; }
  figure $s "zwatch provision --apply (6 disks, 3 datasets)" "$(ms "$t1" "$t0")" ms "host clock, includes ~0.7 s vm.sh round trip"
  vm_run "zpool status vault" > "$E2E_OUT/provision.zpool-status.txt"
  local st; st=$(cat "$E2E_OUT/provision.zpool-status.txt")
  check $s "zpool status: raidz2-0" grep -q '^[[:space:]]*raidz2-0[[:space:]]\+ONLINE' <<<"$st"
  # the plan's disks: the by-id names in its `zpool create` block; zpool status must show exactly those
  local d miss="" plan
  plan=$(sed -n '/^  zpool create/,/^  zfs create/p' "$E2E_OUT/provision.out" | grep -o '/dev/disk/by-id/[^ ]*' | sed 's|.*/||')
  [ "$(wc -l <<<"$plan")" = 6 ] && ok $s "plan: six by-id disks in zpool create" || bad $s "plan: six by-id disks" "got: $(echo $plan)"
  grep -qx "$V_SD1" <<<"$plan" && ok $s "plan names $V_SD1_ARG by its wwn- id $V_SD1" || bad $s "plan names sd1 as $V_SD1" "got: $(echo $plan)"
  for d in $plan; do grep -q "^[[:space:]]*$d[[:space:]]\+ONLINE" <<<"$st" || miss+=" $d"; done
  [ -z "$miss" ] && [ "$(grep -c '^[[:space:]]*\(wwn\|scsi\|virtio\|ata\)-.*ONLINE' <<<"$st")" = 6 ] \
    && ok $s "zpool status: raidz2-0 over exactly the plan's six by-id names" || bad $s "zpool status: the plan's by-id names" "missing:$miss"
  local v
  v=$(vm_run "zpool get -Hp -o value ashift vault"); [ "$v" = 12 ] && ok $s "ashift 12" || bad $s "ashift 12" "got '$v'"
  v=$(vm_run "zfs get -H -o value recordsize,compression vault/pictures | tr '\n' ' '")
  [ "$v" = "1M lz4 " ] && ok $s "vault/pictures recordsize=1M compression=lz4" || bad $s "vault/pictures properties" "got '$v'"
  v=$(vm_run "zfs get -H -o value compression vault/backup")
  [ "$v" = zstd-1 ] && ok $s "vault/backup compression=zstd-1" || bad $s "vault/backup compression" "got '$v'"
  check $s "vault/storage exists" g "zfs list -H vault/storage >/dev/null"
  # some data, so scrub/resilver have something to do (small: TCG)
  g "dd if=/dev/urandom of=/vault/pictures/img0.raw bs=1M count=48 status=none && zpool sync vault"
  # zwatch must say nothing about a healthy new pool: give it 10 s from the pool's creation (the
  # creation's events poll at once; status_interval is 5 s), of which the checks above took most
  local left=$(( 10 - ( $(date +%s%N) - t1 ) / 1000000000 ))
  (( left > 0 )) && sleep "$left"
  local n; n=$(sink --count --status firing --contains vault)
  [ "$n" = 0 ] && ok $s "no page for the healthy new pool" || { bad $s "no page for the healthy new pool" "$n firing notification(s)"; dump_notes 0; }
}

# 2. offline -> warning "can lose 1 more disk"; online -> resolved
sc_offline() {
  local s=offline t0 t1 tn tr r
  quiet 11
  r=$(vm_run "date +%s%N; zpool offline vault $V_VD1 >&2; date +%s%N"); t0=$(head -1 <<<"$r"); t1=$(tail -1 <<<"$r")
  figure $s "zpool offline itself" "$(ms "$t1" "$t0")" ms "guest clock"
  if tn=$(wait_note 30 --after "$t0" --status firing --contains "$V_VD1" --contains "can lose 1 more disk"); then
    ok $s "warning naming $V_VD1 and 'can lose 1 more disk'" "$(ms "$tn" "$t0") ms"
    figure $s "zpool offline started -> notification in the sink" "$(ms "$tn" "$t0")" ms "guest clock: date right before zpool offline -> sink receive"
    figure $s "zpool offline returned -> notification in the sink" "$(ms "$tn" "$t1")" ms "guest clock"
    budget $s "zpool offline started -> notification" "$(ms "$tn" "$t0")"
    local note sev; note=$(sink --after "$t0" --status firing --contains "$V_VD1" --json | head -1)
    sev=$(jq -r .severity <<<"$note")
    legs $s "$note" "$tn"
    versus_zed $s "$tn" "$t0" 'pool vault'
    [ "$sev" = warning ] && ok $s "severity warning" || bad $s "severity warning" "got $sev"
  else
    bad $s "warning naming $V_VD1 and 'can lose 1 more disk'" "none within 30 s"; dump_notes "$t0"
  fi
  # the status page, its API and /metrics while the disk is offline (scenarios_web.sh)
  declare -F web_offline >/dev/null && web_offline "$t0"
  # the page answered from the phone through the Telegram fake (scenarios_answer.sh)
  declare -F answer_offline >/dev/null && answer_offline "$t0"
  sleep 2
  t0=$(vm_run "date +%s%N; zpool online vault $V_VD1 >&2")
  if tr=$(wait_note 60 --after "$t0" --alert VdevState=resolved --contains vault); then
    ok $s "resolved after zpool online" "$(ms "$tr" "$t0") ms"
    figure $s "zpool online -> resolved notification" "$(ms "$tr" "$t0")" ms "guest clock (includes the short resilver)"
  else
    bad $s "resolved after zpool online" "none within 60 s"; dump_notes "$t0"
  fi
  g "zpool wait -t resilver vault"
}

# 3. hot-unplug sd1 -> notification with the replacement guide
sc_unplug() {
  local s=unplug dev t_host0 t_gone tn id
  dev=$(vm_run "basename \$(readlink -f $D/$V_SD1)")
  quiet 11
  # a guest-side watcher gives the moment the kernel drops the disk (guest clock)
  id=$(vm_spawn "while [ -e /sys/block/$dev ]; do sleep 0.01; done; date +%s%N")
  sleep 1
  t_host0=$(date +%s%N)
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd1"}}' >/dev/null || { bad $s "QMP device_del sd1"; return 1; }
  t_gone=$(vm_wait "$id" 30)
  if tn=$(wait_note 30 --after "$((t_gone - 5000000000))" --status firing --contains "$V_SD1" --contains "zpool replace vault"); then
    local t_host1; t_host1=$(date +%s%N)
    ok $s "page naming $V_SD1 with the replacement guide (zpool replace vault ...)" "$(ms "$tn" "$t_gone") ms after the kernel dropped the disk"
    figure $s "device_del -> notification in the sink" "$(ms "$tn" "$t_gone")" ms "guest clock: /sys/block/$dev gone -> sink receive"
    figure $s "device_del -> notification seen by the host" "$(ms "$t_host1" "$t_host0")" ms "host clock: QMP sent -> matching line read from the 9p share"
    # when ZFS itself posted the event (the earliest zwatch can know with follow_events)
    local tz; tz=$(vm_run "l=\$(zpool events -H | grep -E 'resource.fs.zfs.(statechange|removed)' | tail -2 | head -1); date -d \"\$(echo \$l | awk '{print \$1, \$2, \$3, \$4}')\" +%s%N")
    [ -n "$tz" ] && figure $s "ZFS event (resource.fs.zfs.statechange) -> notification in the sink" "$(ms "$tn" "$tz")" ms "guest clock: event time from zpool events -> sink receive (zwatch's own share)" \
      && figure $s "kernel dropped the disk -> ZFS event" "$(ms "$tz" "$t_gone")" ms "guest clock (ZFS/udev, not zwatch)"
    # The ceiling is zwatch's own share, from ZFS's event: how long ZFS takes to notice the
    # kernel's drop is not zwatch's (0.5-6.4 s in this guest, the longer after the web
    # scenario's load); the whole is the figure above. Without the event time, the whole.
    if [ -n "$tz" ] && (( tz > t_gone )); then budget $s "ZFS event -> notification" "$(ms "$tn" "$tz")"
    else budget $s "disk dropped by the kernel -> notification" "$(ms "$tn" "$t_gone")"; fi
    E2E_UNPLUG_NOTE=$(sink --after "$((t_gone - 5000000000))" --status firing --contains "$V_SD1" --contains "zpool replace vault" --json | head -1)
    printf '%s\n' "$E2E_UNPLUG_NOTE" | jq . > "$E2E_OUT/unplug.notification.json"
    legs $s "$E2E_UNPLUG_NOTE" "$tn"
    versus_zed $s "$tn" "$t_gone" 'pool vault'
    local t; t=$(jq -r .text <<<"$E2E_UNPLUG_NOTE")
    grep -q 'REMOVED' <<<"$t" && ok $s "text says REMOVED" || bad $s "text says REMOVED" "$(head -3 <<<"$t")"
  else
    bad $s "page naming $V_SD1 with 'zpool replace vault'" "none within 30 s"; dump_notes "$((t_gone - 5000000000))"
  fi
}

# 7. restart zwatch while the unplug alert fires -> no second page
# Split so the wait is not idle: sc_restart_begin restarts zwatch, run.sh runs the scenarios that
# page nothing about vault (encrypted, capacity) meanwhile, and sc_restart_check looks at every
# page since the restart (at least 20 s: zwatch's start, several status polls and a group flush;
# a duplicate would go out with the first status poll after the restart).
sc_restart_begin() {
  E2E_RESTART_T0=$(gnow)
  zw_stop
  zw_start || { bad restart "zwatch starts again"; return 1; }
  E2E_RESTART_T1=$(date +%s)
}
# destroyed SCENARIO POOL [storm]: SCENARIO has just destroyed POOL on purpose (zpool destroy);
# sc_destroyed checks at the end that zwatch did not page it missing (PoolMissing's `for` is 2 min),
# as a result of SCENARIO, so that CI's second try reruns that scenario, not all of them. With
# "storm" (the suspended pool, whose failed writes posted thousands of ereports) the count is a
# figure: zwatch knows of the destroy from ZFS's pool_destroy event, and after such a storm
# zpool events -f delivered it 0.5-2.5 min late (2026-12-07), after PoolMissing's hold.
E2E_DESTROYED=() E2E_DESTROYED_FIRST= E2E_DESTROYED_LAST=
destroyed() {
  local p="$1:$2"; [ "${3:-}" = storm ] && p="$p:storm"
  case " ${E2E_DESTROYED[*]} " in *" $p "*) ;; *) E2E_DESTROYED+=("$p") ;; esac
  E2E_DESTROYED_LAST=$(gnow); E2E_DESTROYED_FIRST=${E2E_DESTROYED_FIRST:-$E2E_DESTROYED_LAST}
}
sc_destroyed() {
  [ ${#E2E_DESTROYED[@]} -gt 0 ] || return 0
  local e s p n what left=$(( 150 - ($(gnow) - E2E_DESTROYED_LAST) / 1000000000 ))
  (( left > 0 )) && sleep "$left"
  for e in "${E2E_DESTROYED[@]}"; do
    IFS=: read -r s p _ <<< "$e"
    n=$(sink --count --after "$E2E_DESTROYED_FIRST" --status firing --alert PoolMissing --contains "pool $p is not imported")
    what="no PoolMissing for $p, destroyed on purpose (zpool destroy), 2.5 min after"
    if [ "${e##*:}" = storm ]; then
      figure $s "PoolMissing pages for $p, destroyed after a suspension's ereport storm" "$n" pages "sink, 2.5 min after; the pool_destroy event comes late after such a storm"
    elif [ "$n" = 0 ]; then ok $s "$what"
    else bad $s "$what" "$n pages"; dump_notes "$E2E_DESTROYED_FIRST"
    fi
  done
}

sc_restart_check() { # once, and before anything else pages about vault (replace, scrub)
  [ -n "${E2E_RESTART_T0:-}" ] && [ -z "${E2E_RESTART_CHECKED:-}" ] || return 0
  E2E_RESTART_CHECKED=1
  local s=restart n t0=$E2E_RESTART_T0 left
  left=$(( 20 - ( $(date +%s) - E2E_RESTART_T1 ) )); (( left > 0 )) && sleep "$left"
  local rss; rss=$(vm_run "awk '/VmRSS/{print \$2}' /proc/\$(pgrep -x zwatch)/status")
  figure $s "zwatch VmRSS $(( $(date +%s) - E2E_RESTART_T1 )) s after a restart" "$((rss / 1024))" MiB "/proc/PID/status, 2.3.2 guest, pools vault (DEGRADED), safe, small (full)"
  n=$(sink --count --after "$t0" --status firing --contains "$V_SD1")
  [ "$n" = 0 ] && ok $s "no second page for the firing unplug alert after kill -TERM + start ($(( $(date +%s) - E2E_RESTART_T1 )) s watched)" \
    || { bad $s "no second page after restart" "$n firing notification(s) naming $V_SD1"; dump_notes "$t0"; }
}

# 6. the guide from the unplug alert: its own command line as a dry run, then the replacement
# confirmed from the phone through the Telegram fake (answer_replace, scenarios_answer.sh), which
# runs zpool replace through the same code as zwatch replace; without scenarios_answer.sh, the
# guide's command with --new SPARE --yes
sc_replace() {
  local s=replace cmd old t0 tr
  # the guide's own command line (`zwatch replace vault OLD`), literally, plus --new SPARE
  cmd=$(jq -r '.text // ""' <<<"${E2E_UNPLUG_NOTE:-null}" | grep -E '^ +zwatch replace vault [^ ]+$' | head -1 | sed 's/^ *//')
  if [ -z "$cmd" ]; then bad $s "the unplug notification's guide has a 'zwatch replace vault OLD' line"; return 1; fi
  ok $s "guide line: $cmd"
  old=${cmd##* }
  if vm_run "$cmd --new $D/$SPARE --dry-run" > "$E2E_OUT/replace.dry-run.out" 2>&1 && grep -q "zpool replace vault $old $D/$SPARE" "$E2E_OUT/replace.dry-run.out"; then
    ok $s "zwatch replace vault $old --new $SPARE --dry-run names zpool replace vault $old $D/$SPARE"
  else
    bad $s "zwatch replace --dry-run names the command" "see replace.dry-run.out"; tail -20 "$E2E_OUT/replace.dry-run.out" >&2
  fi
  t0=$(gnow)
  if declare -F answer_replace >/dev/null; then
    answer_replace "$t0" || return 1
  elif vm_run "$cmd --new $D/$SPARE --yes" > "$E2E_OUT/replace.out" 2>&1; then
    ok $s "zwatch replace vault $old --new $SPARE --yes exit 0"
    grep -qi 'resilver' "$E2E_OUT/replace.out" && ok $s "resilver followed" || bad $s "resilver followed" "no 'resilver' in replace.out"
  else
    bad $s "zwatch replace exit 0" "see replace.out"; tail -20 "$E2E_OUT/replace.out" >&2; return 1
  fi
  local t1; t1=$(gnow)
  figure $s "replacement (resilver followed to the end)" "$(ms "$t1" "$t0")" ms "guest clock"
  local h; h=$(vm_run "zpool list -H -o health vault")
  [ "$h" = ONLINE ] && ok $s "vault ONLINE" || bad $s "vault ONLINE" "got $h"
  vm_run "zpool status vault" > "$E2E_OUT/replace.zpool-status.txt"
  grep -q "$SPARE" "$E2E_OUT/replace.zpool-status.txt" && ok $s "$SPARE in vault" || bad $s "$SPARE in vault"
  if tr=$(wait_note 60 --after "$t0" --status resolved --contains "$V_SD1"); then
    ok $s "resolved notice for $V_SD1" "$(ms "$tr" "$t1") ms after the replacement ended"
  else
    bad $s "resolved notice for $V_SD1" "none within 60 s"; dump_notes "$t0"
  fi
}

# 4. garbage over the middle of one disk, scrub -> checksum errors + scrub repaired
sc_scrub() {
  local s=scrub t0 tn
  quiet 11
  g "dd if=/dev/urandom of=$D/$V_VD2 bs=1M seek=12 count=4 oflag=direct conv=notrunc status=none" || { bad $s "dd"; return 1; }
  t0=$(gnow)
  vm_run "zpool scrub -w vault" >/dev/null 2>&1
  local t1; t1=$(gnow)
  figure $s "zpool scrub -w (48 MB raidz2, 4 MiB garbage)" "$(ms "$t1" "$t0")" ms "guest clock"
  vm_run "zpool status vault" > "$E2E_OUT/scrub.zpool-status.txt"
  # error counts wait 10 s for a state change that explains them, then group_wait behind
  # the replace's resilver notice of the same pool: ~25 s
  if tn=$(wait_note 60 --after "$t0" --alert VdevErrors=firing --contains "$V_VD2"); then
    ok $s "checksum-error alert naming $V_VD2" "$(ms "$tn" "$t0") ms after zpool scrub started"
    figure $s "zpool scrub started -> checksum-error notification" "$(ms "$tn" "$t0")" ms "guest clock (arrives while the scrub runs; the counts wait 10 s, then group_wait)"
    # zed mails when the scrub finishes (scrub_finish-notify.sh), nothing for the checksum ereports
    versus_zed $s "$tn" "$t0" 'scrub_finish' figure
  else
    bad $s "checksum-error alert (VdevErrors) naming $V_VD2" "none within 60 s"; dump_notes "$t0"
  fi
  if tn=$(wait_note 30 --after "$t0" --alert ScrubErrors --contains "repaired"); then
    ok $s "'scrub repaired' notice" "$(ms "$tn" "$t1") ms after scrub -w returned"
  else
    bad $s "'scrub repaired' notice (ScrubErrors)" "none within 30 s"; dump_notes "$t0"
  fi
}

# 8. small pool on the 2 GiB disk filled past 90 % -> critical capacity alert
# Split too: sc_capacity_start spawns the fill (1-1.5 min under TCG) in the background; run.sh
# starts it before the restart scenario and checks it after the encrypted one: neither measures a
# latency the fill would disturb (restart checks that no page comes; encrypted is functional).
sc_capacity_start() {
  E2E_FILL_JOB=$(vm_spawn "zpool create -f -o ashift=12 -O compression=off small $D/$SMALL || exit 1; date +%s%N; dd if=/dev/zero of=/small/fill bs=1M status=none 2>/dev/null; zpool sync small; date +%s%N")
}
sc_capacity_check() {
  local s=capacity t0 t1 tn r cap
  [ -n "${E2E_FILL_JOB:-}" ] || return 1
  r=$(vm_wait "$E2E_FILL_JOB" 600) || { bad $s "zpool create small, then fill it" "$r"; return 1; }
  t0=$(head -1 <<<"$r"); t1=$(tail -1 <<<"$r")
  cap=$(vm_run "zpool list -Hp -o capacity small")
  figure $s "fill 'small' (2 GiB disk) until ENOSPC" "$(ms "$t1" "$t0")" ms "guest clock; zpool list capacity then $cap %"
  if tn=$(wait_note 60 --after "$t0" --alert PoolCapacity=firing --contains small --severity critical); then
    ok $s "critical capacity alert for small (zpool list $cap %)" "$(ms "$tn" "$t1") ms after the fill ended"
    figure $s "fill ended -> critical capacity notification" "$(ms "$tn" "$t1")" ms "guest clock (negative: it fired while dd was still writing); rules.for.PoolCapacity=0s, list_interval 2s"
  else
    bad $s "critical PoolCapacity for small" "none within 60 s (capacity $cap %)"; dump_notes "$t0"
  fi
}

# 5. NVMe critical warning -> critical SMART alert (smart.interval 1m)
# Split in two so the run does not sit idle for a SMART interval: sc_nvme_inject early,
# sc_nvme_check at the end (its latency is still measured from the injection).
sc_nvme_inject() {
  E2E_NVME_T0=$(gnow)
  vm_qmp '{"execute":"qom-set","arguments":{"path":"/machine/peripheral/nvme0","property":"smart_critical_warning","value":4}}' >/dev/null \
    || { bad nvme "QMP qom-set"; return 1; }
}
sc_nvme_check() {
  local s=nvme t0=${E2E_NVME_T0:?sc_nvme_inject first} tn left
  left=$(( 90 - ( $(date +%s) - t0 / 1000000000 ) )); (( left < 5 )) && left=5
  if tn=$(wait_note "$left" --after "$t0" --status firing --severity critical --contains ZWNVME0001); then
    local t_host1; t_host1=$(date +%s%N)
    local names; names=$(sink --after "$t0" --status firing --severity critical --contains ZWNVME0001 --json | head -1 | jq -r '[.notification.alerts[].name] | join(",")')
    ok $s "critical SMART alert for ZWNVME0001 ($names)" "$(ms "$tn" "$t0") ms"
    figure $s "qom-set smart_critical_warning -> critical notification" "$(ms "$tn" "$t0")" ms "guest clock (gnow ~0.5 s before the QMP); bounded by smart.interval 1m"
  else
    bad $s "critical SMART alert for ZWNVME0001" "none within 90 s of the qom-set"; dump_notes "$t0"
  fi
}

# poll cost: zpool's own time vs zwatch's parse of the same output (in the guest, median of 5)
sc_pollcost() {
  local s=pollcost v
  med5() { vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time $1 >/dev/null 2>&1; } 2>&1; done | sort -n | sed -n 3p"; }
  g "zpool status -j --json-int -p -P > /tmp/st.json && zpool status -p -P > /tmp/st.txt"
  v=$(med5 "zpool status -j --json-int -p -P");  figure $s "zpool status -j --json-int -p -P" "$v" s "guest wall time, median of 5 (bash time)"
  v=$(med5 "zpool status -p -P");                figure $s "zpool status -p -P (text)" "$v" s "guest wall time, median of 5"
  v=$(med5 "zpool list -Hp");                    figure $s "zpool list -Hp" "$v" s "guest wall time, median of 5"
  g "zpool list -Hp > /tmp/list.txt"
  v=$(vm_run "parsecost status-json /tmp/st.json"); figure $s "zwatch parse of that zpool status -j output (in-process)" "$v" us "guest, e2e/parsecost: zfs.ParseStatusJSON, mean of 200"
  v=$(vm_run "parsecost status-text /tmp/st.txt"); figure $s "zwatch parse of that zpool status text output (in-process)" "$v" us "guest, e2e/parsecost: zfs.ParseStatusText, mean of 200"
  v=$(vm_run "parsecost list /tmp/list.txt");      figure $s "zwatch parse of zpool list -Hp (in-process)" "$v" us "guest, e2e/parsecost: zfs.ParseList, mean of 200"
  v=$(med5 "zwatch status");             figure $s "zwatch status, live (zpool status -j + parse + render)" "$v" s "guest wall time, median of 5"
  local rss; rss=$(vm_run "awk '/VmRSS/{print \$2}' /proc/\$(pgrep -x zwatch)/status")
  figure $s "zwatch VmRSS at the end of the run" "$((rss / 1024))" MiB "/proc/PID/status VmRSS"
  local cpu; cpu=$(vm_run "p=\$(pgrep -x zwatch); awk '{print \$14+\$15, \$22}' /proc/\$p/stat; getconf CLK_TCK; awk '{print \$1}' /proc/uptime" | tr '\n' ' ')
  figure $s "zwatch CPU time / wall time since its restart" "$(awk -v a="$cpu" 'BEGIN{split(a,x," "); printf "%.1f s / %.0f s", x[1]/x[3], x[4]-x[2]/x[3]}')" "" "/proc/PID/stat utime+stime (zwatch only, not its zpool/smartctl children); includes the scenarios' bursts"
  # steady state: 15 s with nothing happening (two pools, list 2 s, status 5 s, events followed)
  v=$(vm_run "p=\$(pgrep -x zwatch); read -r a1 a2 a3 a4 <<<\$(awk '{print \$14,\$15,\$16,\$17}' /proc/\$p/stat); sleep 15; read -r b1 b2 b3 b4 <<<\$(awk '{print \$14,\$15,\$16,\$17}' /proc/\$p/stat); t=\$(getconf CLK_TCK); echo \$(( 100*(b1+b2-a1-a2)/t/15 )) \$(( 100*(b3+b4-a3-a4)/t/15 ))")
  figure $s "zwatch CPU with idle pools: zwatch itself" "${v% *}" "% of one vCPU" "/proc/PID/stat utime+stime over 15 s, e2e intervals (list 2 s, status 5 s, datasets 5 s, snapshots 10 s when scenarios_datasets.sh runs); TCG vCPU, 10-50x slower than hardware"
  figure $s "zwatch CPU with idle pools: its zpool/zfs/smartctl children" "${v#* }" "% of one vCPU" "/proc/PID/stat cutime+cstime over the same 15 s"
}

# ------------------------------------------------------------------ OpenZFS 2.1.11 (no zpool status -j)
# every captured 2.1.11 `zpool status` text file reads without error (exit 0 healthy / 1 problems found)
sc_captured_2111() {
  local s=parse-2.1.11 f rc n=0 badf="" dir=$ZW_E2E_REPO/testdata/captured/zfs-2.1.11
  for f in "$dir"/*zpool-status*.txt; do
    n=$((n + 1))
    "$E2E_SHARE/bin/zwatch" status --input "$f" --json > /tmp/zw-e2e-st.json 2> /tmp/zw-e2e-st.err; rc=$?
    if { [ $rc = 0 ] || { [ $rc = 1 ] && grep -q 'problem(s) found' /tmp/zw-e2e-st.err; }; } \
       && { jq -e '.pools | length > 0' /tmp/zw-e2e-st.json >/dev/null 2>&1 || grep -q '^all pools are healthy' "$f"; }; then :; else
      badf+=" $(basename "$f")(rc=$rc: $(head -c 200 /tmp/zw-e2e-st.err))"
    fi
  done
  [ -z "$badf" ] && ok $s "zwatch status --input reads all $n captured 2.1.11 status files" || bad $s "captured 2.1.11 status files" "$badf"
  rm -f /tmp/zw-e2e-st.json /tmp/zw-e2e-st.err
}

# live, in a booted 2.1.11 VM: zwatch status must fall back to text (no -j there)
sc_live_2111() {
  local s=live-2.1.11 o rc
  g "zpool create -f -o ashift=12 tank raidz1 $D/virtio-ZWV0001 $D/virtio-ZWV0002 $D/virtio-ZWV0003 && zpool offline tank $D/virtio-ZWV0002" || { bad $s "zpool create + offline"; return 1; }
  o=$(vm_run "zpool status -j 2>&1; echo rc=\$?"); say "2.1.11 zpool status -j: $(tail -1 <<<"$o")"
  o=$(vm_run "$G/bin/zwatch status --json" 2>"$E2E_OUT/live-2.1.11.stderr"); rc=$?
  printf '%s\n' "$o" > "$E2E_OUT/live-2.1.11.status.json"
  [ $rc = 1 ] && ok $s "zwatch status exit 1 (problem found)" || bad $s "zwatch status exit 1" "rc=$rc: $(head -c 300 "$E2E_OUT/live-2.1.11.stderr")"
  jq -e '.pools[] | select(.name=="tank") | .state=="DEGRADED"' <<<"$o" >/dev/null && ok $s "tank DEGRADED read live from text output" || bad $s "tank DEGRADED" "$(head -c 300 <<<"$o")"
  grep -q 'virtio-ZWV0002' <<<"$o" && grep -q OFFLINE <<<"$o" && ok $s "OFFLINE disk virtio-ZWV0002 seen" || bad $s "OFFLINE disk seen"
  vm_run "$G/bin/zwatch status" > "$E2E_OUT/live-2.1.11.status.txt" 2>&1
  local v; v=$(vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time zpool status -p -P >/dev/null; } 2>&1; done | sort -n | sed -n 3p")
  figure $s "zpool status -p -P on 2.1.11" "$v" s "guest wall time, median of 5"
  v=$(vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time zpool status -p -P -v >/dev/null; } 2>&1; done | sort -n | sed -n 3p")
  figure $s "zpool status -p -P -v on 2.1.11 (what zwatch runs there)" "$v" s "guest wall time, median of 5"
  v=$(vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time $G/bin/zwatch version >/dev/null; } 2>&1; done | sort -n | sed -n 3p")
  figure $s "zwatch version started from the 9p share on 2.1.11" "$v" s "guest wall time, median of 5 (the 9p share, not zwatch: see the next figure)"
  v=$(vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time zpool status -j >/dev/null 2>&1; } 2>&1; done | sort -n | sed -n 3p")
  figure $s "zpool status -j refused on 2.1.11 (zwatch's JSON probe, once per process)" "$v" s "guest wall time, median of 5"
  g "cp $G/bin/zwatch /tmp/zwatch"
  v=$(vm_run "TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time /tmp/zwatch status >/dev/null 2>&1; } 2>&1; done | sort -n | sed -n 3p")
  figure $s "zwatch status (live: zpool status -j refused + zpool status -p -P -v + parse + render) on 2.1.11" "$v" s "guest wall time, median of 5, binary copied to /tmp"
}

# 9. the two-SSD encrypted mirror with a key file (issue 7), then `provision bench` on it
V_SSD=ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003
V_NVME1=nvme-QEMU_NVMe_Ctrl_ZWNVME0002
sc_encrypted() {
  local s=encrypted v
  vm_run "zwatch provision --pool safe --layout mirror $D/$V_SSD $D/$V_NVME1 --encrypt --key-file /etc/zfs/keys/safe.key --dataset docs:compression=zstd-1 --apply --yes" \
    > "$E2E_OUT/encrypted.out" 2>&1
  local rc=$?
  [ $rc = 0 ] && ok $s "zwatch provision --encrypt --apply exit 0" || { bad $s "zwatch provision --encrypt --apply exit 0" "rc=$rc, see encrypted.out"; tail -30 "$E2E_OUT/encrypted.out" >&2; return 1; }
  v=$(vm_run "zpool status safe" | grep -c '^[[:space:]]*\(ata\|nvme\)-.*ONLINE')
  [ "$v" = 2 ] && ok $s "mirror of the two SSDs by by-id name" || bad $s "mirror of the two SSDs" "got $v by-id members"
  v=$(vm_run "zfs get -H -o value encryption,keyformat,keylocation safe | tr '\n' ' '")
  [ "$v" = "aes-256-gcm raw file:///etc/zfs/keys/safe.key " ] && ok $s "aes-256-gcm, raw key, keylocation file:///etc/zfs/keys/safe.key" || bad $s "encryption properties" "got '$v'"
  v=$(vm_run "stat -c '%a %s' /etc/zfs/keys/safe.key")
  [ "$v" = "600 32" ] && ok $s "key file mode 600, 32 bytes" || bad $s "key file" "got '$v'"
  check $s "boot unit that loads the key is installed" g "test -f /etc/systemd/system/zfs-load-key@.service"
  grep -q "safe.key" "$E2E_OUT/encrypted.out" && grep -qi "back.*up" "$E2E_OUT/encrypted.out" \
    && ok $s "loud reminder to back the key up, with its path" || bad $s "key backup reminder" "see encrypted.out"
  v=$(vm_run "zfs get -H -o value compression,encryption safe/docs | tr '\n' ' '")
  [ "$v" = "zstd-1 aes-256-gcm " ] && ok $s "safe/docs zstd-1, encrypted" || bad $s "safe/docs properties" "got '$v'"
  # The same plan again: already provisioned, nothing destroyed.
  vm_run "zwatch provision --pool safe --layout mirror $D/$V_SSD $D/$V_NVME1 --encrypt --key-file /etc/zfs/keys/safe.key --dataset docs:compression=zstd-1" \
    > "$E2E_OUT/encrypted-again.out" 2>&1
  grep -qi "already provisioned" "$E2E_OUT/encrypted-again.out" && ok $s "running the plan again: already provisioned" || bad $s "idempotent" "see encrypted-again.out"
  # provision bench on the new pool, small files (TCG: this checks that it works, not the speeds), with encryption
  local t0 t1; t0=$(date +%s%N)
  vm_run "zwatch provision bench safe --size-mib 4 --encryption" > "$E2E_OUT/bench.out" 2>&1
  rc=$?; t1=$(date +%s%N)
  [ $rc = 0 ] && ok $s "zwatch provision bench safe --encryption exit 0" || { bad $s "provision bench exit 0" "rc=$rc, see bench.out"; tail -20 "$E2E_OUT/bench.out" >&2; }
  # safe's root dataset is encrypted, so every bench dataset is: 4 compressions x 2 kinds of data,
  # all encrypted, and the output says why there are no unencrypted rows
  v=$(grep -cE '^ *(off|lz4|zstd-1|zstd-3) +yes +(incompressible|mixed) ' "$E2E_OUT/bench.out")
  [ "$v" = 8 ] && ! grep -qE '^ *(off|lz4|zstd-1|zstd-3) +no ' "$E2E_OUT/bench.out" \
    && ok $s "bench table: 4 compressions x 2 kinds of data, all encrypted (the pool's root is)" || bad $s "bench table rows" "got $v encrypted rows, see bench.out"
  grep -q "root dataset is encrypted (aes-256-gcm)" "$E2E_OUT/bench.out" && ok $s "bench says every dataset of an encrypted pool is encrypted" || bad $s "bench inherited-encryption note" "see bench.out"
  grep -q "^Recommended (encrypted datasets): compression=" "$E2E_OUT/bench.out" && ok $s "bench recommends settings" || bad $s "bench recommendation" "see bench.out"
  v=$(vm_run "zfs list -H -o name -r safe | grep -c zwatch-bench" )
  [ "$v" = 0 ] && ok $s "bench destroyed its temporary datasets" || bad $s "bench cleanup" "$v left"
  figure $s "zwatch provision bench --encryption on the encrypted pool (4 MiB files, 8 settings)" "$(ms "$t1" "$t0")" ms "host clock"
}

# 12. a suspended pool: a single-disk pool (failmode=wait) on a scsi disk hot-added for it (sd9,
# so vault's disks are left alone), the disk unplugged while writes are pending. One critical
# PoolSuspended page within seconds (the kernel's kstat says SUSPENDED ~0.5 s after the unplug),
# naming the fix; no "permanent data errors" page and no separate "zpool hangs" page for it; the
# guide says zpool clear, not replace. Then the disk comes back, zpool clear, and it resolves.
SUSP_POOL=hung
SUSP_SERIAL=ZWS0009
susp_plug() { # the drive node (kept by device_del of a blockdev-add'ed drive) and the scsi-hd
  vm_qmp '{"execute":"query-named-block-nodes"}' | grep -q '"drv-sd9"' ||
    vm_qmp '{"execute":"blockdev-add","arguments":{"driver":"raw","node-name":"drv-sd9","file":{"driver":"file","filename":"'"$ZW_VM_DIR"'/disks/sd9.raw"}}}' >/dev/null || return 1
  vm_qmp '{"execute":"device_add","arguments":{"driver":"scsi-hd","bus":"scsi0.0","scsi-id":9,"lun":0,"drive":"drv-sd9","id":"sd9","serial":"'"$SUSP_SERIAL"'","vendor":"SEAGATE","product":"ST4000NM0035"}}' | grep -q '"return"'
}
# zed_mails on|off: zed mails (ZED_EMAIL_ADDR set, e2e_setup) or not, zed restarted. Off for the
# suspend scenario: its statechange zedlet puts `zpool status POOL` into the mail, and with the
# pool's only disk gone that zpool status hung, and ZFS then neither suspended the pool nor
# finished a write (2 of 4 runs in 2026-12, each after the zed recorder came in; the guest's
# z_wr_iss thread waited in zfs_zevent_post). A box that mails from zed can hang so too: zwatch
# pages that as CommandHangs/IOHung, other scenarios' business.
zed_mails() {
  local set=""; [ "$1" = on ] && set="ZED_EMAIL_ADDR=\"root\""
  g "sed -i -E '/^#?ZED_EMAIL_ADDR=/d' /etc/zfs/zed.d/zed.rc && { [ -z '$set' ] || echo '$set' >> /etc/zfs/zed.d/zed.rc; } && systemctl restart zfs-zed"
}

# susp_clear: zpool clear until the pool is no longer SUSPENDED, for at most 150 s: a zpool clear
# that hangs in the kernel must not hang the run (vm_run waits 30 min).
susp_clear() {
  local id; id=$(vm_spawn "for i in \$(seq 60); do udevadm settle; zpool clear $SUSP_POOL 2>/dev/null && [ \"\$(cat /proc/spl/kstat/zfs/$SUSP_POOL/state)\" != SUSPENDED ] && exit 0; sleep 1; done; exit 1")
  vm_wait "$id" 150 >/dev/null
}
sc_suspend() {
  local s=suspend
  truncate -s 1G "$ZW_VM_DIR/disks/sd9.raw" || { bad $s "create the sd9 disk file"; return 1; }
  zed_mails off || { bad $s "zed without mail for the scenario"; return 1; }
  sc_suspend_run; local rc=$?
  zed_mails on || bad $s "zed mailing again after the scenario"
  return $rc
}
sc_suspend_run() {
  local s=suspend name dev id ks kick= t_gone t_susp t_page tn writer n text after
  susp_plug || { bad $s "QMP hot-add of sd9"; return 1; }
  name=$(vm_run "for i in \$(seq 100); do udevadm settle; n=\$(ls $D | grep -- '$SUSP_SERIAL\$' | head -1); [ -n \"\$n\" ] && { echo \$n; exit 0; }; sleep 0.2; done; exit 1") \
    || { bad $s "sd9 appears in $D"; return 1; }
  g "zpool create -f -o failmode=wait $SUSP_POOL $D/$name" || { bad $s "zpool create -o failmode=wait $SUSP_POOL"; return 1; }
  ok $s "single-disk pool $SUSP_POOL (failmode=wait) on $name"
  dev=$(vm_run "basename \$(readlink -f $D/$name)")
  # zeros, not urandom: the same writes for a fraction of the emulated CPU. Small synchronous
  # writes (128 KiB, fsync, five a second) for 11 s give the pool data and a history of writes;
  # then they stop, and nothing is in flight when the disk goes: a write queued at the unplug
  # hung in the guest's SCSI layer past its command timeout (30 s, retried) and ZFS suspended
  # the pool after 30-150 s or not at all (3 full runs of 2026-12-07), while a write issued to
  # the disk once it is gone fails at once and suspends the pool within seconds.
  g "rm -f /tmp/zw-susp-stop"
  writer=$(vm_spawn "i=0; while [ ! -e /tmp/zw-susp-stop ]; do dd if=/dev/zero of=/$SUSP_POOL/f\$((i++)) bs=128k count=1 conv=fsync 2>/dev/null; sleep 0.2; done")
  quiet 11
  g "touch /tmp/zw-susp-stop"; vm_wait "$writer" 60 >/dev/null 2>&1
  g "zpool sync $SUSP_POOL && echo 5 > /sys/block/$dev/device/timeout" || say "suspend: zpool sync or the SCSI timeout failed"
  # guest watchers: the moment the kernel drops the disk, and the moment ZFS suspends the pool
  id=$(vm_spawn "while [ -e /sys/block/$dev ]; do sleep 0.01; done; date +%s%N")
  ks=$(vm_spawn "while [ \"\$(cat /proc/spl/kstat/zfs/$SUSP_POOL/state)\" != SUSPENDED ]; do sleep 0.05; done; date +%s%N")
  sleep 1
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd9"}}' >/dev/null || { bad $s "QMP device_del sd9"; return 1; }
  t_gone=$(vm_wait "$id" 30)
  # One synchronous write to the pool whose disk is gone (a program writing on): it fails, ZFS
  # suspends the pool (failmode=wait), and the write waits until the pool resumes; collected
  # after the recovery. One write, not a writer left running: every failed block is a data
  # ereport, tens of thousands, and zpool commands in the guest were then slow for the rest of
  # the run.
  kick=$(vm_spawn "dd if=/dev/zero of=/$SUSP_POOL/kick bs=128k count=1 conv=fsync 2>/dev/null")
  t_susp=$(vm_wait "$ks" 120) || {
    bad $s "ZFS suspends the pool within 120 s" "state $(vm_run "cat /proc/spl/kstat/zfs/$SUSP_POOL/state")"
    # leave no write hung on the pool for the scenarios after this one
    susp_plug; susp_clear >/dev/null
    vm_wait "$kick" 60 >/dev/null 2>&1; g "zpool destroy -f $SUSP_POOL"
    return 1
  }
  after=$((t_gone - 5000000000))
  t_page=$t_susp
  figure $s "disk dropped by the kernel -> pool SUSPENDED (kstat)" "$(ms "$t_susp" "$t_gone")" ms "guest clock (ZFS, not zwatch): /sys/block/$dev gone -> /proc/spl/kstat/zfs/$SUSP_POOL/state SUSPENDED"
  if tn=$(wait_note 60 --after "$after" --status firing --alert PoolSuspended --contains "pool $SUSP_POOL is SUSPENDED"); then
    t_page=$tn
    figure $s "pool SUSPENDED (kstat) -> PoolSuspended in the sink" "$(ms "$tn" "$t_susp")" ms "guest clock: kstat SUSPENDED -> sink receive (zwatch's share; the hang-to-page time)"
    figure $s "disk dropped -> PoolSuspended in the sink" "$(ms "$tn" "$t_gone")" ms "guest clock: /sys/block/$dev gone -> sink receive"
    budget $s "pool SUSPENDED -> PoolSuspended page" "$(ms "$tn" "$t_susp")"
    text=$(sink --after "$after" --status firing --alert PoolSuspended --json | head -1 | jq -r .text)
    printf '%s\n' "$text" > "$E2E_OUT/suspend.notification.txt"
    grep -q "zpool clear $SUSP_POOL" <<<"$text" && grep -q "zpool status -v $SUSP_POOL" <<<"$text" \
      && ok $s "page names the fix: zpool clear $SUSP_POOL, zpool status -v $SUSP_POOL" || bad $s "page names the fix" "$(head -5 <<<"$text")"
    grep -q "zpool replace" <<<"$text" && bad $s "no 'zpool replace' for a suspended pool" || ok $s "no 'zpool replace' for a suspended pool"
  else
    bad $s "PoolSuspended page within 60 s"; dump_notes "$after"
  fi
  sleep 15 # status polls and the ereport burst: anything else would page now
  # From the PoolSuspended page on zwatch knows the pool is suspended: no status poll or ereport
  # may page its data errors then. A page judged from a zpool status that ran before the
  # suspension can still arrive between the suspension and that page in a slow guest (a zpool
  # status of 12 s, the rules' consumer reopened after a missed heartbeat): counted as a figure.
  n=$(sink --count --after "$t_page" --status firing --contains "permanent data error")
  [ "$n" = 0 ] && ok $s "no 'permanent data errors' page once zwatch knew the pool was suspended (folded under PoolSuspended)" || { bad $s "no 'permanent data errors' page once zwatch knew the pool was suspended" "$n"; dump_notes "$t_susp"; }
  n=$(sink --count --after "$t_susp" --before "$t_page" --status firing --contains "permanent data error")
  figure $s "'permanent data errors' pages received between the suspension and the PoolSuspended page" "$n" pages "sink: judged from zpool status runs begun before the suspension, late in a slow guest"
  # ZFS may keep the pool ONLINE for a while, counting the failed writes as data errors, before it suspends it
  # (what those pages say is not yet judged here: issue 14 keeps that window open)
  n=$(sink --count --after "$after" --before "$t_susp" --status firing)
  figure $s "pages while ZFS still called the pool ONLINE (before it suspended it)" "$n" pages "sink: firing notifications between the unplug and kstat SUSPENDED"
  # such a page (the error counts after their 10 s, when ZFS is slow to suspend) must not guide
  # a replacement of the pulled disk before asking whether it is still attached
  n=$(( $(sink --count --after "$after" --before "$t_susp" --status firing --contains "Keep the old disk connected") -
        $(sink --count --after "$after" --before "$t_susp" --status firing --contains "Keep the old disk connected" --contains "Check that the disk is still attached") ))
  [ "$n" = 0 ] && ok $s "no page before the suspension guides keeping the pulled disk connected without asking whether it is attached" \
    || { bad $s "a page before the suspension guides keeping the pulled disk connected" "$n"; dump_notes "$after"; }
  n=$(sink --count --after "$after" --status firing --contains "zpool hangs")
  [ "$n" = 0 ] && ok $s "no separate 'zpool hangs' page" || bad $s "no separate 'zpool hangs' page" "$n"
  n=$(sink --count --after "$after" --status firing --alert PoolSuspended)
  [ "$n" = 1 ] && ok $s "PoolSuspended paged once" || bad $s "PoolSuspended paged once" "$n"
  n=$(grep 'zpool events burst' "$E2E_SHARE/out/zwatch.log" | awk '{for(i=1;i<=NF;i++) if($i ~ /^events=/){split($i,a,"="); e+=a[2]} else if($i ~ /^folded=/){split($i,b,"="); f+=b[2]}} END{printf "%d %d", e, f}')
  figure $s "zpool events read / folded (whole run)" "${n% *}" events "${n#* } folded into earlier identical events; last burst line: $(grep 'zpool events burst' "$E2E_SHARE/out/zwatch.log" | tail -1 | grep -o 'events=.*')"
  # the disk back, zpool clear: resolved
  local t_back; t_back=$(gnow)
  susp_plug || bad $s "QMP re-add of sd9"
  susp_clear && ok $s "disk back + zpool clear: the pool resumes" || bad $s "disk back + zpool clear" "state $(vm_run "cat /proc/spl/kstat/zfs/$SUSP_POOL/state")"
  if tn=$(wait_note 60 --after "$t_back" --alert PoolSuspended=resolved); then
    ok $s "PoolSuspended resolved after zpool clear" "$(ms "$tn" "$t_back") ms after the replug"
  else
    bad $s "PoolSuspended resolved after zpool clear"; dump_notes "$t_back"
  fi
  # After the clear, the writes that were lost are real permanent errors: a PoolDataErrors
  # page then is right (the guide said to check zpool status -v); a SUSPENDED one is not.
  n=$(( $(sink --count --after "$t_back" --status firing --alert PoolSuspended=firing) +
        $(sink --count --after "$t_back" --status firing --alert PoolState=firing --contains "pool $SUSP_POOL") ))
  [ "$n" = 0 ] && ok $s "no 'SUSPENDED' page after the recovery" || { bad $s "no 'SUSPENDED' page after the recovery" "$n"; dump_notes "$t_back"; }
  n=$(sink --count --after "$t_back" --status firing --alert PoolDataErrors=firing --contains "pool $SUSP_POOL")
  figure $s "pages of the writes lost while suspended (PoolDataErrors after zpool clear)" "$n" pages "sink: firing PoolDataErrors for $SUSP_POOL after the replug"
  vm_wait "$kick" 60 >/dev/null 2>&1
  g "zpool destroy -f $SUSP_POOL" && destroyed $s $SUSP_POOL storm || bad $s "zpool destroy $SUSP_POOL"
  # its disk goes too: the guest keeps no disk the scenario added (and it can run again)
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd9"}}' >/dev/null
  g "for i in \$(seq 100); do ls $D | grep -q -- '$SUSP_SERIAL\$' || exit 0; sleep 0.2; done; exit 1" >/dev/null || say "suspend: sd9 still there after device_del"
  # The scenarios after this one time pages in seconds: they start once the guest is calm
  # again (zpool list answers within 2 s: it takes ~0.5 s under TCG), and the figure says
  # how long that took, so a storm left behind shows here and not as their failures.
  n=$(vm_run "s=\$(date +%s); for i in \$(seq 90); do a=\$(date +%s%N); zpool list -H >/dev/null; b=\$(date +%s%N); [ \$(( (b-a)/1000000 )) -lt 2000 ] && { echo \$(( \$(date +%s)-s )); exit 0; }; sleep 2; done; echo never")
  figure $s "the guest calm again after the scenario (zpool list under 2 s)" "$n" s "guest clock, after zpool destroy $SUSP_POOL"
  [ "$n" != never ] && ok $s "the guest is calm again after the scenario" || bad $s "the guest is calm again within 3-5 min after the scenario" "zpool list still slow"
}
