# scenarios_kernel.sh — the e2e scenarios of the kernel log and slow I/O (issue 16). Sourced by
# e2e/run.sh after scenarios.sh (whose helpers it uses: g, ok, bad, figure, wait_note, quiet, sink,
# dump_notes, gnow, ms).
#
# Disks of their own, hot-added scsi-hd on the virtio-scsi bus (the other scenarios hold the boot
# disks): pool 'kio' = mirror of sd7 (plain) and sd8 (QEMU blkdebug: reads fail with EIO once the
# host arms it), pool 'kslow' = mirror of sd5 and sd6 (sd6 throttled by QEMU).
# shellcheck shell=bash

# Alerts of this file and the rules.for they get in the guest config (only those the built zwatch
# knows: rules.for rejects unknown names). They fire at once by default; 0s says so for the run.
KERN_ALERTS=(KernelDiskErrors=0s LinkResets=0s SlowIO=0s IOHung=0s)
kern_known_alerts() { # zwatch binary → ", A: 0s, B: 0s" for those its catalogue has
  local zw=$1 a out="" f; f=$(mktemp)
  for a in "${KERN_ALERTS[@]}"; do
    printf 'rules: {for: {%s: %s}}\n' "${a%%=*}" "${a#*=}" > "$f"
    "$zw" check-config "$f" >/dev/null 2>&1 && out+=", ${a%%=*}: ${a#*=}"
  done
  rm -f "$f"; printf '%s' "$out"
}

# kern_plug ID SCSI-ID SERIAL [blkdebug] — a fresh 512 MiB image as a hot-added scsi-hd (WWN
# 0x5000c500a00001NN, NN = scsi id); with blkdebug: reads fail with EIO once armed (kern_arm).
# blkdebug's error rule is armed in state 2, and the only way into state 2 is a write-zeroes
# request, which neither ZFS nor the guest kernel sends: the host sends one (kern_arm).
KERN_BD_RULES='"set-state":[{"event":"pwritev_zero","state":1,"new_state":2}],"inject-error":[{"event":"read_aio","state":2,"errno":5,"iotype":"read"}]'
kern_plug() {
  local id=$1 sid=$2 serial=$3 img=$ZW_VM_DIR/disks/$1.raw file
  truncate -s 512M "$img" || return 1
  file="{\"driver\":\"file\",\"filename\":\"$img\"}"
  [ "${4:-}" = blkdebug ] && file="{\"driver\":\"blkdebug\",$KERN_BD_RULES,\"image\":$file}"
  vm_qmp "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"drv-$id\",\"file\":$file}}" >/dev/null || return 1
  vm_qmp "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"scsi-hd\",\"bus\":\"scsi0.0\",\"scsi-id\":$sid,\"lun\":0,\"drive\":\"drv-$id\",\"id\":\"$id\",\"serial\":\"$serial\",\"wwn\":$((0x5000c500a0000100 + sid)),\"vendor\":\"SEAGATE\",\"product\":\"ST4000NM0035\"}}" | grep -q '"return"' || return 1
  g "for i in \$(seq 150); do [ -e $D/wwn-0x5000c500a00001$(printf %02d "$sid") ] && exit 0; sleep 0.2; done; exit 1"
}
# kern_arm ID — from now on every read of the blkdebug disk fails (one write-zeroes of 4 KiB
# at 511 MiB, inside the reserved partition 9 ZFS leaves unused, through the device itself)
kern_arm() {
  vm_qmp "{\"execute\":\"human-monitor-command\",\"arguments\":{\"command-line\":\"qemu-io -d $1 \\\"write -z 535822336 4096\\\"\"}}" | grep -q '"return": ""'
}
kern_name() { vm_run "basename \$(readlink -f $D/$1)"; }   # by-id name -> kernel name

# kern_first AFTER TEXT NAME... — the guest receive time (ns) of the first firing page after AFTER
# that carries one of the alerts NAME and mentions TEXT; status 1 when none
kern_first() {
  local after=$1 text=$2 n r best=""; shift 2
  for n in "$@"; do
    r=$(sink --after "$after" --status firing --alert "$n" --contains "$text") || continue
    r=${r%% *}; [ -z "$best" ] || (( r < best )) && best=$r
  done
  [ -n "$best" ] && echo "$best"
}

# (a) a disk returning read errors in a mirror → a kernel-log alert naming the disk, before or with
# the ZFS alert, and one incident
KIO_BAD=wwn-0x5000c500a0000108    # sd8, blkdebug
KIO_BAD_SERIAL=ZWBD0008
KERN_SIDE=(KernelDiskErrors DiskIncident)
ZFS_SIDE=(VdevErrors VdevState PoolState RedundancyMargin)   # what ZFS's own view of kio pages
sc_kern_readerr() {
  local s=readerr dev t0 tk tz tr ti text n end
  kern_plug sd7 7 ZWBD0007 && kern_plug sd8 8 $KIO_BAD_SERIAL blkdebug || { bad $s "hot-add sd7 and the blkdebug sd8"; return 1; }
  g "zpool create -f -o ashift=12 kio mirror $D/wwn-0x5000c500a0000107 $D/$KIO_BAD && dd if=/dev/urandom of=/kio/data bs=1M count=16 status=none && zpool sync kio" \
    || { bad $s "mirror kio (sd7 + blkdebug sd8)"; return 1; }
  dev=$(kern_name $KIO_BAD)
  ok $s "mirror kio of sd7 and the blkdebug disk $KIO_BAD ($dev)"
  sleep 6; quiet 11   # zwatch has seen kio healthy (status_interval 5s)
  t0=$(gnow)
  kern_arm sd8 || { bad $s "arm blkdebug read errors on sd8 (HMP qemu-io write -z)"; return 1; }
  g "zpool scrub kio" || bad $s "zpool scrub kio"   # the reads: every block of both sides
  # the first page naming the disk, then time for the rest of the cascade to arrive
  end=$(( $(date +%s) + 120 ))
  until tk=$(kern_first "$t0" "$dev" "${KERN_SIDE[@]}"); do
    (( $(date +%s) >= end )) && break; sleep 0.5
  done
  sleep 15
  tz=$(kern_first "$t0" kio "${ZFS_SIDE[@]}")
  # the kernel's own time of the first error record (journald's receive time of it)
  tr=$(vm_run "journalctl -k -o short-unix --no-pager --since @$(( t0 / 1000000000 )) | grep -m1 -E 'I/O error, dev $dev|\\[$dev\\].*FAILED' | cut -d' ' -f1")
  [ -n "$tr" ] && { tr=$(awk -v t="$tr" 'BEGIN{printf "%.0f", t * 1e9}'); figure $s "read errors armed -> first kernel error record for $dev" "$(ms "$tr" "$t0")" ms "guest clock: journald's time of the first I/O error line (QEMU, ZFS's first read, the kernel)"; }
  if [ -n "$tk" ]; then
    ok $s "kernel-log alert naming $dev" "$(ms "$tk" "$t0") ms after the errors were armed"
    figure $s "read errors armed -> kernel-log alert (KernelDiskErrors/DiskIncident) in the sink" "$(ms "$tk" "$t0")" ms "guest clock; the first reads are the scrub's"
    [ -n "$tr" ] && figure $s "first kernel error record -> kernel-log alert in the sink" "$(ms "$tk" "$tr")" ms "guest clock (zwatch's share)"
  else
    bad $s "kernel-log alert (KernelDiskErrors or DiskIncident) naming $dev within 120 s"; dump_notes "$t0"
  fi
  if [ -n "$tz" ]; then
    figure $s "read errors armed -> first ZFS alert about kio (${ZFS_SIDE[*]})" "$(ms "$tz" "$t0")" ms "guest clock"
  else
    say "readerr: no page of ZFS's own alerts about kio (inhibited under the incident, or none)"
  fi
  # Whichever side notices first pages: the kernel log, or ZFS's own event (follow_events). Once
  # both complain about the disk, DiskIncident joins them in the pool's incident and inhibits its
  # parts, so the side that came second arrives as the incident's update (group_interval later),
  # not as a page of its own: which side is first is a figure, the first page a check.
  local when="kernel ${tk:+$(ms "$tk" "$t0") ms}, ZFS ${tz:+$(ms "$tz" "$t0") ms}" first=${tk:-}
  [ -n "$tz" ] && { [ -z "$first" ] || (( tz < first )); } && first=$tz
  if [ -n "$first" ]; then
    figure $s "first page about the failing disk came from" "$( [ "$first" = "${tk:-}" ] && echo "the kernel log" || echo "ZFS")" "" "$when"
    versus_zed $s "$first" "$t0" 'kio' figure
    # The failed reads themselves take seconds under TCG (retries, ZFS's own error handling):
    # 3-9 s in the runs of 2026-12-07, so the bound is looser than the person-facing ceiling.
    if (( $(ms "$first" "$t0") <= 30000 )); then ok $s "first page about the disk or its pool within 30 s of the errors" "$(ms "$first" "$t0") ms ($when)"
    else bad $s "first page about the disk or its pool within 30 s of the errors" "$when"; dump_notes "$t0"; fi
  else
    bad $s "a page about the failing disk or its pool" "none within 120 s"; dump_notes "$t0"
  fi
  # one incident: DiskIncident joins the kernel and ZFS sides of the disk (by serial)
  if ti=$(kern_first "$t0" "$KIO_BAD_SERIAL" DiskIncident); then
    text=$(sink --after "$t0" --status firing --alert DiskIncident --contains "$KIO_BAD_SERIAL" --json | head -1)
    printf '%s\n' "$text" | jq . > "$E2E_OUT/readerr.notification.json"
    ok $s "one DiskIncident naming $KIO_BAD_SERIAL" "$(jq -r '.summary' <<<"$text")"
    figure $s "read errors armed -> DiskIncident in the sink" "$(ms "$ti" "$t0")" ms "guest clock"
    grep -q kio <<<"$(jq -r '.text, .summary' <<<"$text")" && ok $s "the incident names pool kio" || bad $s "the incident names pool kio" "$(jq -r .summary <<<"$text")"
  else
    bad $s "DiskIncident naming $KIO_BAD_SERIAL"; dump_notes "$t0"
  fi
  # the scrub and zed keep the kernel counting for a while: growing counts must not page again
  # (only an escalation does), so the incident's pages are counted a minute after the first
  [ -n "$ti" ] && sleep $(( 60 - ( $(gnow) - ti ) / 1000000000 > 0 ? 60 - ( $(gnow) - ti ) / 1000000000 : 0 ))
  n=$(sink --count --after "$t0" --status firing --alert DiskIncident --contains "$KIO_BAD_SERIAL")
  [ "$n" = 1 ] && ok $s "DiskIncident paged once in the minute after it (growing counts do not page again)" \
    || { bad $s "DiskIncident paged once in the minute after it (growing counts do not page again)" "$n pages"; dump_notes "$t0"; }
  vm_run "zpool status kio" > "$E2E_OUT/readerr.zpool-status.txt" 2>&1
  g "zpool wait -t scrub kio" >/dev/null 2>&1
  kern_unplug readerr kio sd7 sd8
}

# kern_unplug SCENARIO POOL ID...: the scenario's pool destroyed and its disks gone, so that the scenarios
# after it (pollcost, footprint) measure the guest's own pools, not a faulted or throttled leftover.
kern_unplug() {
  local s=$1 pool=$2 id; shift 2
  g "zpool destroy -f $pool" >/dev/null 2>&1 && destroyed "$s" "$pool" || say "zpool destroy $pool failed"
  for id in "$@"; do vm_qmp "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$id\"}}" >/dev/null; done
}

# (b) one side of a mirror throttled by QEMU, zio_slow_io_ms lowered to 100 ms → SlowIO naming it
KSLOW_BAD=wwn-0x5000c500a0000106  # sd6, throttled
sc_kern_slowio() {
  local s=slowio t0 tn text job
  kern_plug sd5 5 ZWSL0005 && kern_plug sd6 6 ZWSL0006 || { bad $s "hot-add sd5 and sd6"; return 1; }
  g "zpool create -f -o ashift=12 kslow mirror $D/wwn-0x5000c500a0000105 $D/$KSLOW_BAD" || { bad $s "mirror kslow"; return 1; }
  g "echo 100 > /sys/module/zfs/parameters/zio_slow_io_ms" || { bad $s "zio_slow_io_ms=100"; return 1; }
  sleep 6; quiet 11
  t0=$(gnow)
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"id":"sd6","bps":262144,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' >/dev/null \
    || { bad $s "QMP block_set_io_throttle sd6"; return 1; }
  # synchronous writes keep 128 KiB I/Os queued on the throttled side (~0.5 s each)
  job=$(vm_spawn "for i in \$(seq 60); do dd if=/dev/urandom of=/kslow/f\$i bs=128k count=8 conv=fsync status=none; done")
  if tn=$(wait_note 90 --after "$t0" --status firing --alert SlowIO --contains "$KSLOW_BAD"); then
    ok $s "SlowIO naming $KSLOW_BAD" "$(ms "$tn" "$t0") ms after the throttle"
    figure $s "QEMU throttle (256 KiB/s, zio_slow_io_ms=100) -> SlowIO in the sink" "$(ms "$tn" "$t0")" ms "guest clock; needs rules.slow_io.rises (2) rises over zpool status -s polls (status_interval 5s)"
    text=$(sink --after "$t0" --status firing --alert SlowIO --json | head -1)
    printf '%s\n' "$text" | jq . > "$E2E_OUT/slowio.notification.json"
    [ "$(jq -r .severity <<<"$text")" = warning ] && ok $s "SlowIO is a warning" || bad $s "SlowIO is a warning" "$(jq -r .severity <<<"$text")"
  else
    bad $s "SlowIO naming $KSLOW_BAD within 90 s"; dump_notes "$t0"
  fi
  vm_run "zpool status -s kslow" > "$E2E_OUT/slowio.zpool-status-s.txt" 2>&1
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"id":"sd6","bps":0,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' >/dev/null
  vm_stop "$job" >/dev/null 2>&1   # the writes have done their part; under TCG they'd take minutes more
  g "echo 30000 > /sys/module/zfs/parameters/zio_slow_io_ms"
  kern_unplug slowio kslow sd5 sd6
}
