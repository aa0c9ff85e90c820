# capture_kernel.sh — capture step l (sourced by capture.sh): the kernel log of disks that vanish
# (scsi-hd, virtio-blk and NVMe hot-unplug) and of a disk that returns read errors (QEMU blkdebug),
# ZFS's slow-I/O counters and delay/deadman events under a QEMU I/O throttle, and `zfs version`.
# Self-contained: a fresh VM with PCIe hotplug ports (capture.sh boots it with ZW_HOTPLUG_PORTS).
#
# Each kernel moment is captured five ways, of the same records: the raw /dev/kmsg records (one
# read(2) each, as a follower reads them; e2e/kmsg-since.py), dmesg, dmesg -T, journalctl -k and
# journalctl -k -o json. A mark before the fault (kmsg sequence number, dmesg line count, journal
# cursor) selects what came after it.
# shellcheck shell=bash

L_KMSG=/mnt/host/kmsg-since.py
NOTES[lnative]="As l2 and l3 (files l2-native-*, l3-native-*), in a VM whose root ports use PCIe native hotplug (ZW_PCIE_NATIVE_HOTPLUG=1: -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off): device_del presses the slot's attention button, and the guest's pciehp logs 'pcieport 0000:00:0c.0: pciehp: Slot(1): Attention button pressed' and 'Powering off due to button press'; about 5 s later (pciehp's wait for a cancel) the device goes and ZFS logs its zio error=5 lines."

NOTES[l]="Self-contained, in a fresh VM booted with three empty PCIe root ports (ZW_HOTPLUG_PORTS=3). Every kernel moment is kept five ways, the same records: FILE.kmsg.txt (raw /dev/kmsg records, one read(2) each, with their SUBSYSTEM=/DEVICE= dictionary lines, by e2e/kmsg-since.py), .dmesg.txt, .dmesg-T.txt, .journalctl-k.txt, .journalctl-k-o-json.json, all from a mark taken right before the fault. l0: zfs version (text, -j), /sys/module/zfs/version. l1: QMP device_del of the scsi-hd sd1 in mirror kscsi under write load: the kernel says 'Synchronizing SCSI cache' and 'Synchronize Cache(10) failed: Result: hostbyte=DID_BAD_TARGET driverbyte=DRIVER_OK', then ZFS's 'zio pool=... error=5' lines; the vdev goes REMOVED. l2, l3: a virtio-blk-pci and an NVMe controller hot-added into a root port, in a mirror, then device_del: QEMU 7.2's q35 unplugs through ACPI PCI hotplug, and the guest kernel logs nothing about the device; only ZFS's zio error=5 lines (type=2 write, type=5 flush). l4: a scsi-hd on QEMU blkdebug (raw over blkdebug over the file; inject-error read_aio errno 5 in state 2, entered on a write-zeroes request that only the host sends: HMP qemu-io -d bd1 'write -z ...') in mirror kio with virtio-ZWV0002, then zpool scrub -w. For EIO QEMU's scsi-disk answers CHECK CONDITION with sense key ABORTED COMMAND, ASC/ASCQ 00/06: the kernel prints 'FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age=0s', 'Sense Key : Aborted Command [current] ', 'Add. Sense: I/O process terminated', the CDB, and 'I/O error, dev sdX, sector N op 0x0:(READ) flags 0x0 phys_seg 1 prio class 2'; ZFS faults the vdev after 3 READ errors ('too many errors'). l5: mirror kslow, QEMU block_set_io_throttle of virtio-ZWV0003 to 256 KiB/s, zio_slow_io_ms=100 (default 30000; zfs_slow_io_events_per_second 20): zpool status -s has a SLOW column (16 on the throttled leaf), -j has slow_ios, and ereport.fs.zfs.delay events. l6: deadman tunables lowered (ziotime 3000 ms, synctime 5000 ms, checktime 1000 ms) and the leaf at 4 KiB/s -> ereport.fs.zfs.deadman; l6-deadman.* with zfs_deadman_failmode=wait (the default), l6-deadman-continue.* with failmode=continue, which on 2.3.2 hit a kernel BUG (list_del corruption in z_wr_int, kept in its kernel log) and left the pool hung."
L_DISKS=$ZW_VM_DIR/disks

# l_mark — remember where the kernel log stands now, in the guest
l_mark() {
  cp "$HERE/kmsg-since.py" "$ZW_VM_DIR/share/kmsg-since.py"
  g "python3 $L_KMSG --next > /tmp/kl.seq && dmesg | wc -l > /tmp/kl.lines && rm -f /tmp/kl.cursor && journalctl -k -n 1 --cursor-file=/tmp/kl.cursor > /dev/null"
}

# l_kernel STEP — the kernel records since l_mark, five ways (journald forwards them in a moment)
l_kernel() {
  local s=$1
  sleep 2
  cap "$s" kmsg.txt "python3 $L_KMSG --from \$(cat /tmp/kl.seq)"
  cap "$s" dmesg.txt "dmesg | tail -n +\$(( \$(cat /tmp/kl.lines) + 1 ))"
  cap "$s" dmesg-T.txt "dmesg -T | tail -n +\$(( \$(cat /tmp/kl.lines) + 1 ))"
  cap "$s" journalctl-k.txt "journalctl -k --no-pager --after-cursor=\"\$(cat /tmp/kl.cursor)\""
  cap "$s" journalctl-k-o-json.json "journalctl -k --no-pager -o json --after-cursor=\"\$(cat /tmp/kl.cursor)\""
}

# l_pool STEP POOL — the pool's status (the collector's forms) and its events
l_pool() {
  local s=$1 p=$2
  cap "$s" zpool-status-p-P-v.txt "zpool status -p -P -v $p"
  cap "$s" zpool-status.txt "zpool status $p"
  cap "$s" zpool-status-j.json "zpool status -j --json-int -p -P $p"
  cap "$s" zpool-events-v.txt "zpool events -v $p"
  cap "$s" zpool-events-H-v.txt "zpool events -H -v $p"
}

# l_plug ID DRIVER BUS SERIAL [SIZE] [FILE-NODE-JSON] — a fresh disk image, hot-added. FILE-NODE-JSON
# replaces the plain file node (blkdebug over it).
l_plug() {
  local id=$1 drv=$2 bus=$3 serial=$4 size=${5:-512M} file=${6:-} extra=""
  truncate -s "$size" "$L_DISKS/$id.raw"
  [ -n "$file" ] || file="{\"driver\":\"file\",\"filename\":\"$L_DISKS/$id.raw\"}"
  vm_qmp "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"drv-$id\",\"file\":$file}}" > /dev/null || return 1
  case $drv in
    scsi-hd) extra=",\"scsi-id\":${bus#scsi0.0:},\"lun\":0,\"wwn\":$((0x5000c500a0000100 + ${bus#scsi0.0:})),\"vendor\":\"SEAGATE\",\"product\":\"ST4000NM0035\""; bus=scsi0.0 ;;
  esac
  vm_qmp "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"$drv\",\"bus\":\"$bus\",\"drive\":\"drv-$id\",\"id\":\"$id\",\"serial\":\"$serial\"$extra}}" > "$OUT/l.qmp-device_add-$id.json"
}

# l_wait_dev PATH present|absent [SECONDS]
l_wait_dev() {
  local t=${3:-60} test='[ -e '"$1"' ]'; [ "$2" = absent ] && test='[ ! -e '"$1"' ]'
  g "for i in \$(seq $((t * 5))); do $test && exit 0; sleep 0.2; done; exit 1" || { say "$1 not $2 after ${t}s"; return 1; }
}

# l_unplug STEP QDEV-ID DEV-BY-ID POOL — I/O running on the pool, device_del, what the kernel says
l_unplug() {
  local s=$1 id=$2 dev=$3 pool=$4 job
  job=$(vm_spawn "while :; do dd if=/dev/urandom of=/$pool/load bs=128k count=32 conv=fsync status=none; done")
  sleep 2
  l_mark
  vm_qmp "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$id\"}}" > "$OUT/$s.qmp-device_del.json"
  l_wait_dev "$dev" absent 60
  wait_status "$pool" 'REMOVED|UNAVAIL|FAULTED' 30 || say "$s: $pool shows no missing disk"
  sleep 2
  vm_stop "$job" > /dev/null 2>&1
  l_kernel "$s"
  l_pool "$s" "$pool"
  cap "$s" ls-l-dev-disk-by-id.txt "ls -l /dev/disk/by-id"
}

l_zfs_version() {
  cap l0-version zfs-version.txt "zfs version"
  cap l0-version zfs-version-j.json "zfs version -j"
  cap l0-version sys-module-zfs-version.txt "cat /sys/module/zfs/version"
  cap l0-version sys-module-spl-version.txt "cat /sys/module/spl/version"
  cap l0-version zpool-version.txt "zpool version"
  cap l0-version modinfo-zfs.txt "modinfo -F version zfs"
  cap l0-version uname-r.txt "uname -r"
}

step_l() {
  say "l: kernel log of hot-unplugs and read errors, slow and hung I/O, zfs version"
  grep -q pcie-root-port "$ZW_VM_DIR/qemu.cmdline" || { say "l needs a VM booted with ZW_HOTPLUG_PORTS=3 (capture.sh l boots one)"; return 1; }
  l_zfs_version
  g "zpool events -c" > /dev/null

  say "l1: scsi-hd hot-unplug under load (mirror kscsi of the scsi-hd sd1 and sd2)"
  g "zpool create -f -o ashift=12 kscsi mirror $SD1 $SD2" && g "zpool events -c" > /dev/null &&
    l_unplug l1-scsi-unplug sd1 "$SD1" kscsi

  say "l2: virtio-blk hot-unplug (hot-added in PCIe root port hp1) under load (mirror kvirt with virtio-ZWV0001)"
  l_plug vh1 virtio-blk-pci hp1 ZWVH0001 && l_wait_dev $D/virtio-ZWVH0001 present &&
    g "zpool create -f -o ashift=12 kvirt mirror $VD1 $D/virtio-ZWVH0001" && g "zpool events -c" > /dev/null &&
    l_unplug l2-virtio-unplug vh1 $D/virtio-ZWVH0001 kvirt

  say "l3: NVMe hot-unplug (controller hot-added in hp2) under load (mirror knvme with nvme ZWNVME0001)"
  l_plug nh1 nvme hp2 ZWNVMEH001 && l_wait_dev $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH001 present &&
    g "zpool create -f -o ashift=12 knvme mirror $NV0 $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH001" && g "zpool events -c" > /dev/null &&
    l_unplug l3-nvme-unplug nh1 $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH001 knvme

  l_read_errors
  step_l5
  step_l6
}

# lnative: l2 and l3 again with PCIe native hotplug (capture.sh lnative boots with
# ZW_PCIE_NATIVE_HOTPLUG=1): the guest's pciehp driver sees the attention button and powers the slot off
step_lnative() {
  grep -q acpi-pci-hotplug-with-bridge-support=off "$ZW_VM_DIR/qemu.cmdline" || { say "lnative needs a VM booted with ZW_HOTPLUG_PORTS=3 ZW_PCIE_NATIVE_HOTPLUG=1"; return 1; }
  say "lnative: virtio-blk and NVMe hot-unplug with PCIe native hotplug"
  g "zpool events -c" > /dev/null
  l_plug vh2 virtio-blk-pci hp1 ZWVH0002 && l_wait_dev $D/virtio-ZWVH0002 present &&
    g "zpool create -f -o ashift=12 kvirt mirror $VD1 $D/virtio-ZWVH0002" && g "zpool events -c" > /dev/null &&
    l_unplug l2-native-virtio-unplug vh2 $D/virtio-ZWVH0002 kvirt
  l_plug nh2 nvme hp2 ZWNVMEH002 && l_wait_dev $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH002 present &&
    g "zpool create -f -o ashift=12 knvme mirror $NV0 $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH002" && g "zpool events -c" > /dev/null &&
    l_unplug l3-native-nvme-unplug nh2 $D/nvme-QEMU_NVMe_Ctrl_ZWNVMEH002 knvme
}

# l5 and l6 can also run alone (capture.sh l5 l6): they make their pool when it is not there
l_kslow() { vm_run "zpool list kslow" >/dev/null 2>&1 || g "zpool create -f -o ashift=12 kslow mirror $VD3 $VD4"; }
step_l5() { l_kslow && l_slow; }
step_l6() { l_kslow && l_deadman "${ZW_DEADMAN_FAILMODE:-wait}"; }

# l4: a scsi-hd whose reads fail with EIO, from a moment the host chooses. blkdebug's error rule is
# armed in state 2, and the only way into state 2 is a write-zeroes request (set-state on
# pwritev_zero), which neither ZFS nor the guest kernel sends: the host sends one with qemu-io
# through the device (HMP `qemu-io -d bd1 "write -z ..."`, into the reserved partition 9 area).
L_BD_RULES='"set-state":[{"event":"pwritev_zero","state":1,"new_state":2}],"inject-error":[{"event":"read_aio","state":2,"errno":5,"iotype":"read"}]'
L_BD_WWN=wwn-0x5000c500a0000105
l_read_errors() {
  local s=l4-read-errors
  say "l4: scsi-hd on blkdebug (read errno 5 once armed) in mirror kio with virtio-ZWV0002; armed, then scrub"
  l_plug bd1 scsi-hd scsi0.0:5 ZWBD0001 512M "{\"driver\":\"blkdebug\",\"node-name\":\"dbg-bd1\",$L_BD_RULES,\"image\":{\"driver\":\"file\",\"filename\":\"$L_DISKS/bd1.raw\"}}" || { say "l4: blkdebug disk not added"; return 1; }
  l_wait_dev $D/$L_BD_WWN present || return 1
  g "zpool create -f -o ashift=12 kio mirror $VD2 $D/$L_BD_WWN && dd if=/dev/urandom of=/kio/data bs=1M count=16 status=none && zpool sync kio" || return 1
  g "zpool events -c" > /dev/null
  l_pool l4-before kio
  l_mark
  vm_qmp '{"execute":"human-monitor-command","arguments":{"command-line":"qemu-io -d bd1 \"write -z 535822336 4096\""}}' > "$OUT/$s.qmp-qemu-io-write-z.json"
  cap "$s" zpool-scrub-w.txt "zpool scrub -w kio"
  sleep 3
  l_kernel "$s"
  l_pool "$s" kio
  cap "$s" zpool-status-x.txt "zpool status -x kio"
}

# l5: slow I/O. zio_slow_io_ms lowered to 100 ms (default 30 s) and QEMU throttling one side of a
# mirror to 256 KiB/s: its 128 KiB writes take ~0.5 s -> the vdev's slow-I/O counter (zpool status -s)
# and ereport.fs.zfs.delay events.
l_slow() {
  local s=l5-slow
  say "l5: mirror kslow (virtio-ZWV0003 throttled, virtio-ZWV0004), zio_slow_io_ms=100"
  cap "$s" zio_slow_io_ms-default.txt "cat /sys/module/zfs/parameters/zio_slow_io_ms /sys/module/zfs/parameters/zfs_slow_io_events_per_second"
  g "echo 100 > /sys/module/zfs/parameters/zio_slow_io_ms && zpool events -c" > /dev/null
  l_pool l5-before kslow
  cap l5-before zpool-status-s.txt "zpool status -s kslow"
  l_mark
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"device":"drv-vd3","bps":262144,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' > "$OUT/$s.qmp-block_set_io_throttle.json"
  g "dd if=/dev/urandom of=/kslow/data bs=128k count=32 conv=fsync status=none && zpool sync kslow"
  l_kernel "$s"
  cap "$s" zpool-status-s.txt "zpool status -s kslow"
  cap "$s" zpool-status-s-p-P-v.txt "zpool status -s -p -P -v kslow"
  cap "$s" zpool-status-s-j.json "zpool status -s -j --json-int -p -P kslow"
  cap "$s" zpool-status-j-no-s.json "zpool status -j --json-int -p -P kslow"
  l_pool "$s" kslow
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"device":"drv-vd3","bps":0,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' > /dev/null
}

# l6 FAILMODE: hung I/O. Deadman tunables lowered (an I/O pending > 3 s, checked every second) and
# one side of mirror kslow throttled to 4 KiB/s, so a 128 KiB write takes ~30 s ->
# ereport.fs.zfs.deadman. Then the throttle is lifted and the pool drains. FAILMODE wait (the
# default: post the event, keep waiting) writes l6-deadman.*; continue (re-dispatch the I/O)
# writes l6-deadman-continue.* (on 2.3.2 it hit a kernel BUG, list_del corruption in z_wr_int).
l_deadman() {
  local mode=$1 s=l6-deadman p=/sys/module/zfs/parameters job
  [ "$mode" = wait ] || s=l6-deadman-$mode
  say "l6: deadman on kslow (virtio-ZWV0003 throttled to 4 KiB/s), zfs_deadman_failmode=$mode"
  cap "$s" deadman-defaults.txt "grep -H . $p/zfs_deadman_enabled $p/zfs_deadman_failmode $p/zfs_deadman_ziotime_ms $p/zfs_deadman_synctime_ms $p/zfs_deadman_checktime_ms"
  g "echo 3000 > $p/zfs_deadman_ziotime_ms && echo 5000 > $p/zfs_deadman_synctime_ms && echo 1000 > $p/zfs_deadman_checktime_ms && echo $mode > $p/zfs_deadman_failmode && zpool events -c" > /dev/null
  l_mark
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"device":"drv-vd3","bps":4096,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' > "$OUT/$s.qmp-block_set_io_throttle.json"
  job=$(vm_spawn "dd if=/dev/urandom of=/kslow/hung bs=128k count=8 conv=fsync status=none")
  g "for i in \$(seq 120); do zpool events kslow | grep -q deadman && exit 0; sleep 0.5; done; exit 1" || say "l6: no deadman event in 60 s"
  sleep 5
  l_kernel "$s"
  cap "$s" zpool-status-s.txt "zpool status -s kslow"
  cap "$s" zpool-status-s-j.json "zpool status -s -j --json-int -p -P kslow"
  l_pool "$s" kslow
  vm_qmp '{"execute":"block_set_io_throttle","arguments":{"device":"drv-vd3","bps":0,"bps_rd":0,"bps_wr":0,"iops":0,"iops_rd":0,"iops_wr":0}}' > /dev/null
  vm_wait "$job" 120 > /dev/null 2>&1
  g "echo 300000 > $p/zfs_deadman_ziotime_ms && echo 600000 > $p/zfs_deadman_synctime_ms && echo 60000 > $p/zfs_deadman_checktime_ms && echo wait > $p/zfs_deadman_failmode"
  cap "$s-drained" zpool-status-s.txt "zpool status -s kslow"
}
