#!/usr/bin/env bash
# capture.sh — run the failure scenarios against real OpenZFS in the e2e VM and
# store the tools' output verbatim under testdata/captured/zfs-<version>/.
#
#   e2e/capture.sh                 boot (if needed), run all steps a..i, write README.md, shut down
#   e2e/capture.sh STEP...         run only these steps against the running VM (they build on each
#                                  other's pool state: a b d c c2 c3 e f g h i j is the full order;
#                                  j is self-contained and can run alone in a fresh VM; k then kbulk
#                                  need a fresh VM of their own: the full run reboots for them; so
#                                  does l, which boots with PCIe hotplug ports; lnative, not in the
#                                  full run, boots with native PCIe hotplug; m, not in the full
#                                  run, in a fresh VM)
#   e2e/capture.sh readme          regenerate README.md from the manifest
#
# Every captured file is the command's stdout, byte for byte. A non-empty stderr is kept
# beside it as FILE.stderr. Exit codes are recorded in the manifest and the README.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vm.sh
source "$HERE/vm.sh"
OUT=${ZW_CAPTURE_DIR:-$HERE/../testdata/captured/zfs-$ZFS_VERSION}
OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
MAN=$OUT/.manifest.tsv
JSON_OK=1; case $ZFS_VERSION in 2.1.*|2.2.*) JSON_OK=0 ;; esac

D=/dev/disk/by-id
SD1=$D/scsi-35000c500a0000001      # scsi-hd   (hot-unplugged in step c)
SD2=$D/wwn-0x5000c500a0000002      # scsi-hd
SD3=$D/wwn-0x5000c500a0000003      # scsi-hd   (replacement in step e)
VD1=$D/virtio-ZWV0001              # virtio-blk (offline/online in step b)
VD2=$D/virtio-ZWV0002              # virtio-blk (corrupted in step d)
VD3=$D/virtio-ZWV0003              # hot spare (step f)
VD4=$D/virtio-ZWV0004              # log (step f)
VD5=$D/virtio-ZWV0005              # cache (step f)
VD6=$D/virtio-ZWV0006              # 2G "small" pool (step h)
ATA1="$D/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001"
ATA2="$D/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000002"
ATA3="$D/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003"
NV0=$D/nvme-QEMU_NVMe_Ctrl_ZWNVME0001
NV1=$D/nvme-QEMU_NVMe_Ctrl_ZWNVME0002

declare -A NOTES=(
  [a]="Healthy: raidz2 'vault' over six by-id disks (2x scsi-hd named scsi-35000c500a0000001 and wwn-0x5000c500a0000002, 2x virtio-blk, 2x AHCI ata-*), ashift=12; mirror 'fast' over the two NVMe namespaces; datasets vault/pictures (recordsize=1M, compression=lz4), vault/storage (refquota=512M), vault/backup (compression=zstd-1, quota=1G); ~100 MB of data written."
  [b]="zpool offline of virtio-ZWV0001 -> DEGRADED (b1); 64 MB written while offline; QEMU throttles writes to that disk (block_set_io_throttle 256 KiB/s) so the resilver after zpool online can be caught in progress (b2, b3); throttle removed, zpool wait -t resilver -> ONLINE (b4)."
  [d]="dd 4 MiB of /dev/urandom over virtio-ZWV0002 at byte offset 12 MiB (inside the data area, labels untouched), then zpool scrub -w -> CKSUM errors and 'scrub repaired' (d1); zpool clear (d2)."
  [c]="QMP device_del of the scsi-hd scsi-35000c500a0000001 (qdev id sd1) -> the vdev goes REMOVED (files c1-removed.*); zpool export (c2-exported.*: 'zpool import' listing) + zpool import -d /dev/disk/by-id with the disk still missing (c3-imported.*): a disk that was REMOVED before the export stays REMOVED, shown by path."
  [c2]="With scsi-...01 still REMOVED: zpool export; QMP device_del of wwn-0x5000c500a0000002 (qdev id sd2) while exported; zpool import -d /dev/disk/by-id -> that disk is shown by GUID with 'was /dev/disk/by-id/...' (files c4-missing.*), and zpool online of the absent GUID prints a warning (c4-missing.zpool-online-absent.txt)."
  [c3]="The disk removed in c2 is plugged back with QMP blockdev-add + device_add (same image, serial and WWN); zed onlines it by itself (the script would run zpool online <guid> otherwise) -> short resilver -> back to ONLINE except the still REMOVED scsi-...01 (files c5-replugged.*)."
  [e]="zpool replace vault <guid of the missing scsi-35000c500a0000001> $SD3 -> replacing-0 with resilver in progress (writes to the new disk throttled to 512 KiB/s by QEMU so it can be captured; e1, e2); throttle removed, zpool wait -> finished (e3)."
  [f]="zpool add vault spare virtio-ZWV0003, log virtio-ZWV0004, cache virtio-ZWV0005 (f1); hot spare put in use by zpool replace of an ata disk (f2) and detached again; dRAID pool 'dpool' = draid1:2d:4c:1s over four 256 MB files in /var/tmp/draid (f3); one child faulted (zpool offline -f); zed attaches the distributed spare draid1-0-0 by itself (sequential rebuild, then the automatic scrub) (f4, captured after both finished)."
  [g]="QMP qom-set /machine/peripheral/nvme0 smart_critical_warning=4 (NVM subsystem reliability degraded) -> smartctl reports FAILED."
  [h]="pool 'small' on the 2 GiB virtio-ZWV0006 (compression=off), filled with zeros until ENOSPC (ZFS keeps at least 128 MiB of slop space, so a pool must be > 1.28 GiB to get past 90 %)."
  [j]="Self-contained (also run on its own in a fresh VM): single-disk pool 'tank' on ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003 with 96 MB of data; scrub with the disk's reads throttled by QEMU to 1 MiB/s -> 'scrub in progress' (j1), zpool scrub -p -> 'scrub paused' (j2), resumed and finished (j3); then 512 KiB of /dev/urandom written at the on-disk location of victim.bin's 9th 128K record (DVA from zdb -ddddd) and zpool scrub -w -> unrecoverable CKSUM errors and 'Permanent errors have been detected' with the file list in zpool status -v (j4). All commands name the pool, so other pools don't appear."
  [i]="zpool events -v / -H -v after all steps above (i1); then zpool events -c, and the stream of zpool events -f -H -v while zpool offline/online of ata-...0000001 and its resilver (i2), followed by zpool events -v of just that (i3). Also arcstats at the end."
)

NOTES[k]="Self-contained, in a fresh VM (its own boot in a full run): pools 'nas' (mirror virtio-ZWV0001/2), 'backup' (virtio-ZWV0003), 'offsite' (mirror of the scsi-hd scsi-...01/wwn-...02). Datasets: nas/media (mountpoint /srv/media, on the guest's ext4 root disk), nas/secret (aes-256-gcm, keyformat=raw, keylocation=file:///etc/zfs/keys/secret.key, 32 random bytes, mode 600) with child nas/secret/photos, nas/vault (keyformat=passphrase, keylocation=prompt), nas/archive (keyformat=hex file key, canmount=noauto), 'nas/My Documents' (a space), nas/legacy (mountpoint=legacy), nas/nomount (none), nas/off (canmount=off), nas/noauto, nas/ro (readonly=on), nas/quota (quota 200M, refquota 100M), nas/vol (64M volume), nas/sparsevol (sparse 1G volume). Snapshots named as sanoid/syncoid, zfs-auto-snapshot, TrueNAS (and FreeNAS 9-11), zrepl and pyznap name them, each created with the guest clock set (date -s) to the time its name says, days back; clock restored to the host's time after; k1-healthy.date-s.txt is the guest time of the capture. k2: unknown properties in -o; a dataset named on the command line that does not exist; a create/destroy loop beside zfs list to catch a dataset vanishing mid-list (k2-vanished, exit 99 = not provoked). k3: zfs send of the oldest nas/media snapshot to backup/media, then zfs send -I up to the syncoid snapshot cut at 12,000,000 bytes (head -c) into zfs receive -s -> receive_resume_token. k4: zfs unload-key of nas/secret (file), nas/vault (prompt) and nas/archive; key file moved away; a 31-byte raw key; keys loaded back. k5: zfs unmount nas/media, then files written into /srv/media (and a symlink to /etc), then zfs mount over them. k6: mountpoints with a tab and a space. k7: zpool import with nothing exported; offsite exported (the cache file from before the export kept as /root/zpool.cache.boot, as a boot that did not import it would see it), then its disks removed one by one (QMP device_del sd2, then sd1), plugged back and imported. zpool events -v after each state (then zpool events -c). Seen on 2.3.2: zpool import with nothing to import prints no pools available to import on stderr and exits 0 (k7-none, k7-both-missing); zpool import -c lists only pools that are not imported (k7-none, k7-imported: nothing while all are imported); with a device missing it first prints cachefile import failed, retrying on stdout (k7-missing, k7-both-missing); zfs load-key/unload-key and zfs mount/unmount post no zpool event (the k4 and k5 events files hold only the header), pool export/import do (sysevent.fs.zfs.pool_export, pool_import, config_sync); zfs mount over a non-empty mountpoint succeeds and hides the files (overlay=on, the default: k5-unmounted.zfs-mount.txt, k5-remounted.find-mountpoint.txt); zfs receive -s -u leaves backup/media unmounted until zfs mount -a (k3, k4-unlocked)."
NOTES[kbulk]="After k, same VM: pool 'bulk' (virtio-ZWV0006, lz4) with 50 datasets bulk/d00..d49; 20 rounds of zfs snapshot -r bulk@autosnap_<hour>_hourly (sanoid's recursive form, hourly names, the guest clock set to each round's hour) -> 1,020 snapshots; the listing timed (5 runs, after a count). One snapshot per dataset per txg is all OpenZFS takes (kbulk.multiple-snapshots-one-fs.txt), and one round takes 10-20 s under TCG, so 50,000 real snapshots cannot be made here: benchmarks scale this listing and say so."

NOTES[m]="Self-contained (run on its own in a fresh VM: capture.sh m): pool 'gone' on virtio-ZWV0006 with 8 MB written, zpool events -c, then zpool destroy gone: the events a deliberate destroy posts (m1-destroyed.zpool-events-v.txt, -H -v), and zpool import -D, which still lists the destroyed pool (m1-destroyed.zpool-import-D.txt)."

say() { printf '[capture %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# cap STEP NAME COMMAND — run COMMAND in the guest, store stdout as STEP.NAME
cap() {
  local step=$1 name=$2 cmd=$3 f rc t0 t1
  f="$step.$name"
  t0=$(date +%s%N)
  vm_run "$cmd" > "$OUT/$f" 2> "$OUT/$f.stderr"; rc=$?
  t1=$(date +%s%N)
  [ -s "$OUT/$f.stderr" ] || rm -f "$OUT/$f.stderr"
  unman "$f"
  printf '%s\t%s\t%s\t%s\t%s\n' "$f" "$step" "$rc" "$(( (t1 - t0) / 1000000 ))" "$cmd" >> "$MAN"
  say "$f rc=$rc ($(( (t1 - t0) / 1000000 )) ms)"
  return 0
}
unman() { [ -f "$MAN" ] && awk -F'\t' -v f="$1" '$1 != f' "$MAN" > "$MAN.tmp" && mv "$MAN.tmp" "$MAN"; return 0; }
# g COMMAND — run a setup command in the guest (not captured); shows output on failure
g() {
  local o rc; o=$(vm_run "$1" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then say "setup command failed rc=$rc: $1"; printf '%s\n' "$o" >&2; fi
  return $rc
}

# the standard set of pool-state captures
state() {
  local s=$1
  cap "$s" zpool-status-p-P.txt   "zpool status -p -P"
  cap "$s" zpool-status.txt       "zpool status"
  [ $JSON_OK = 1 ] && cap "$s" zpool-status-j.json "zpool status -j --json-int -p -P"
  cap "$s" zpool-list-Hp.txt      "zpool list -Hp"
  cap "$s" zpool-list-H-o.txt     "zpool list -H -o name,health,capacity"
  cap "$s" zfs-list-Hp.txt        "zfs list -Hp -o name,used,avail,quota,refquota"
}

# wait until `zpool status POOL` matches REGEX (ERE), up to N seconds
wait_status() {
  local pool=$1 re=$2 n=${3:-60}
  g "for i in \$(seq $((n*5))); do zpool status $pool | grep -Eq '$re' && exit 0; sleep 0.2; done; exit 1"
}

throttle() { # qdev-id bytes/s (0 = off)
  vm_qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"device\":\"drv-$1\",\"bps\":0,\"bps_rd\":0,\"bps_wr\":$2,\"iops\":0,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null || say "throttle $1 failed"
}

step_a() {
  say "a: healthy raidz2 vault + NVMe mirror"
  g "zpool create -f -o ashift=12 vault raidz2 $SD1 $SD2 $VD1 $VD2 $ATA1 $ATA2" || return 1
  g "zpool create -f -o ashift=12 fast mirror $NV0 $NV1" || return 1
  g "zfs create -o recordsize=1M -o compression=lz4 vault/pictures && zfs create -o refquota=512M vault/storage && zfs create -o compression=zstd-1 -o quota=1G vault/backup" || return 1
  g "dd if=/dev/urandom of=/vault/pictures/img0.raw bs=1M count=32 status=none && cp -a /usr/lib/modules/\$(uname -r)/kernel/fs /vault/storage/ && tar -C /usr -cf /vault/backup/usr-share.tar share && dd if=/dev/urandom of=/fast/blob bs=1M count=8 status=none && zpool sync" || return 1
  cap a version.txt "zpool version"
  cap a uname-r.txt "uname -r"
  state a
  cap a zpool-status-x.txt "zpool status -x"
  cap a zpool-get-Hp-all.txt "zpool get -Hp all vault"
  cap a zfs-get-Hp-all.txt "zfs get -Hp all vault/pictures"
  cap a zpool-iostat-v-p.txt "zpool iostat -v -p"
  cap a arcstats.txt "cat /proc/spl/kstat/zfs/arcstats"
  cap a ls-l-dev-disk-by-id.txt "ls -l /dev/disk/by-id"
  cap a lsblk-J-O.json "lsblk -J -O"
  cap a smartctl-scan-open.json "smartctl --scan-open --json"
  cap a smartctl-scan-open.txt "smartctl --scan-open"
  cap a smartctl-a-json-scsi.json "smartctl --json=c -a $SD1"
  cap a smartctl-a-json-virtio.json "smartctl --json=c -a $VD1"
  cap a smartctl-a-json-ata.json "smartctl --json=c -a '$ATA1'"
  cap a smartctl-a-json-ata-ssd.json "smartctl --json=c -a '$ATA3'"
  cap a smartctl-a-json-nvme.json "smartctl --json=c -a /dev/nvme0"
  cap a smartctl-a-nvme.txt "smartctl -a /dev/nvme0"
  cap a smartctl-a-ata.txt "smartctl -a '$ATA1'"
  cap a smartctl-a-scsi.txt "smartctl -a $SD1"
}

step_b() {
  say "b: offline -> DEGRADED, online -> resilver -> ONLINE"
  g "zpool offline vault $VD1" || return 1
  state b1-offline
  cap b1-offline zpool-status-x.txt "zpool status -x"
  g "dd if=/dev/urandom of=/vault/pictures/img1.raw bs=1M count=64 status=none && zpool sync vault"
  throttle vd1 262144
  g "zpool online vault $VD1" || return 1
  wait_status vault 'resilver in progress' 60 || say "no resilver seen"
  state b2-resilvering
  sleep 4
  cap b3-resilvering zpool-status-p-P.txt "zpool status -p -P"
  [ $JSON_OK = 1 ] && cap b3-resilvering zpool-status-j.json "zpool status -j --json-int -p -P"
  throttle vd1 0
  g "zpool wait -t resilver vault"
  state b4-online
}

step_d() {
  say "d: corrupt 4 MiB of one disk, scrub -> checksum errors repaired"
  g "dd if=/dev/urandom of=$VD2 bs=1M seek=12 count=4 oflag=direct conv=notrunc status=none" || return 1
  cap d1-scrubbed zpool-scrub-w.txt "zpool scrub -w vault"
  state d1-scrubbed
  cap d1-scrubbed zpool-status-x.txt "zpool status -x"
  cap d1-scrubbed zpool-status-v.txt "zpool status -v vault"
  g "zpool clear vault"
  cap d2-cleared zpool-status-p-P.txt "zpool status -p -P"
}

step_c() {
  say "c: hot-unplug via QMP device_del -> REMOVED; export/import -> missing by GUID"
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd1"}}' > "$OUT/c1-removed.qmp-device_del.json"
  wait_status vault 'REMOVED' 30 || say "REMOVED not seen"
  state c1-removed
  cap c1-removed ls-l-dev-disk-by-id.txt "ls -l /dev/disk/by-id"
  g "zpool export vault" || return 1
  cap c2-exported zpool-import.txt "zpool import -d /dev/disk/by-id"
  g "zpool import -d /dev/disk/by-id vault" || return 1
  state c3-imported
  cap c3-imported zpool-status-g.txt "zpool status -g vault"
}

step_c2() {
  say "c2: disk missing at import -> GUID + 'was /dev/...'; plugged back -> online -> resilver"
  g "zpool export vault" || return 1
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd2"}}' > "$OUT/c4-missing.qmp-device_del.json"
  g "for i in \$(seq 100); do [ -e /dev/disk/by-id/wwn-0x5000c500a0000002 ] || exit 0; sleep 0.2; done; exit 1" || say "sd2 still present"
  cap c4-missing zpool-import.txt "zpool import -d /dev/disk/by-id"
  g "zpool import -d /dev/disk/by-id vault" || return 1
  state c4-missing
  cap c4-missing zpool-status-g.txt "zpool status -g vault"
  cap c4-missing zpool-status-x.txt "zpool status -x"
  local guid
  guid=$(vm_run "zpool status -g vault | awk '\$2==\"UNAVAIL\" {print \$1; exit}'")
  [ -n "$guid" ] && cap c4-missing zpool-online-absent.txt "zpool online vault $guid"
}

step_c3() {
  say "c3: missing disk plugged back (QMP blockdev-add + device_add) -> zpool online -> resilver"
  vm_qmp "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"drv-sd2b\",\"file\":{\"driver\":\"file\",\"filename\":\"$ZW_VM_DIR/disks/sd2.raw\"}}}" > "$OUT/c5-replugged.qmp-blockdev-add.json"
  vm_qmp '{"execute":"device_add","arguments":{"driver":"scsi-hd","bus":"scsi0.0","scsi-id":1,"lun":0,"drive":"drv-sd2b","id":"sd2","serial":"ZWS0002","wwn":5764824129509261314,"vendor":"SEAGATE","product":"ST4000NM0035"}}' > "$OUT/c5-replugged.qmp-device_add.json"
  g "for i in \$(seq 100); do [ -e /dev/disk/by-id/wwn-0x5000c500a0000002-part1 ] && exit 0; sleep 0.2; done; exit 1" || { say "sd2 did not come back"; return 1; }
  sleep 3
  local guid
  guid=$(vm_run "zpool status -g vault | awk '\$2==\"UNAVAIL\" {print \$1; exit}'")
  say "unavailable vdev guid: ${guid:-none (auto-onlined by zed?)}"
  [ -n "$guid" ] && cap c5-replugged zpool-online.txt "zpool online vault $guid"
  wait_status vault 'resilver' 60 || say "no resilver seen"
  g "zpool wait -t resilver vault"
  state c5-replugged
}

step_e() {
  say "e: replace the missing disk by GUID with the spare scsi disk"
  local guid
  guid=$(vm_run "zpool status -g vault | awk '\$2==\"UNAVAIL\" || \$2==\"REMOVED\" {print \$1; exit}'")
  say "missing vdev guid: $guid"
  [ -n "$guid" ] || return 1
  throttle sd3 524288
  cap e1-replacing zpool-replace.txt "zpool replace vault $guid $SD3"
  wait_status vault 'resilver in progress' 60 || say "no resilver seen"
  state e1-replacing
  sleep 5
  cap e2-replacing zpool-status-p-P.txt "zpool status -p -P"
  cap e2-replacing zpool-status.txt "zpool status"
  [ $JSON_OK = 1 ] && cap e2-replacing zpool-status-j.json "zpool status -j --json-int -p -P"
  throttle sd3 0
  g "zpool wait -t resilver vault"; sleep 1
  state e3-replaced
}

step_f() {
  say "f: spare/log/cache + dRAID"
  g "zpool add vault spare $VD3 && zpool add vault log $VD4 && zpool add vault cache $VD5" || return 1
  state f1-spare-log-cache
  g "zpool replace vault '$ATA2' $VD3" && { wait_status vault 'resilvered|resilver in progress' 60; g "zpool wait -t resilver vault"; }
  state f2-spare-inuse
  g "zpool detach vault $VD3"
  cap f2-spare-inuse after-detach.zpool-status-p-P.txt "zpool status -p -P vault"
  g "mkdir -p /var/tmp/draid && for i in 0 1 2 3; do truncate -s 256M /var/tmp/draid/f\$i; done && zpool create -o ashift=12 dpool draid1:2d:4c:1s /var/tmp/draid/f0 /var/tmp/draid/f1 /var/tmp/draid/f2 /var/tmp/draid/f3 && dd if=/dev/urandom of=/dpool/blob bs=1M count=16 status=none && zpool sync dpool" || return 1
  state f3-draid
  g "zpool offline -f dpool /var/tmp/draid/f1" || return 1
  # zed's fault agent normally attaches the distributed spare by itself; do it by hand if not
  if ! wait_status dpool 'INUSE' 30; then g "zpool replace dpool /var/tmp/draid/f1 draid1-0-0"; fi
  sleep 2; g "zpool wait -t resilver dpool"; sleep 2; g "zpool wait -t scrub dpool"
  state f4-draid-spare
}

step_g() {
  say "g: NVMe critical warning via QMP qom-set"
  vm_qmp '{"execute":"qom-set","arguments":{"path":"/machine/peripheral/nvme0","property":"smart_critical_warning","value":4}}' > "$OUT/g.qmp-qom-set.json"
  cap g smartctl-a-json-nvme-failed.json "smartctl --json=c -a /dev/nvme0"
  cap g smartctl-a-nvme-failed.txt "smartctl -a /dev/nvme0"
  cap g smartctl-H-json-nvme-failed.json "smartctl --json=c -H /dev/nvme0"
  cap g smartctl-a-json-nvme1-ok.json "smartctl --json=c -a /dev/nvme1"
  cap g nvme-smart-log.json "nvme smart-log /dev/nvme0 -o json"
}

step_h() {
  say "h: small pool filled past 90%"
  g "zpool create -f -o ashift=12 -O compression=off small $VD6" || return 1
  g "dd if=/dev/zero of=/small/fill bs=1M status=none; zpool sync small; true"
  state h-full
}

step_i() {
  say "i: events"
  cap i1 zpool-events-v.txt "zpool events -v"
  cap i1 zpool-events-H-v.txt "zpool events -H -v"
  cap i1 zpool-events.txt "zpool events"
  cap i1 arcstats.txt "cat /proc/spl/kstat/zfs/arcstats"
  g "zpool events -c"
  local id; id=$(vm_spawn "exec zpool events -f -H -v")
  sleep 2
  g "zpool offline vault '$ATA1'"; sleep 2
  g "zpool online vault '$ATA1'"; sleep 6
  g "zpool wait -t resilver vault"; sleep 3
  vm_stop "$id" > "$OUT/i2.zpool-events-f-H-v.txt" 2> "$OUT/i2.zpool-events-f-H-v.txt.stderr"
  local rc=$?
  [ -s "$OUT/i2.zpool-events-f-H-v.txt.stderr" ] || rm -f "$OUT/i2.zpool-events-f-H-v.txt.stderr"
  unman i2.zpool-events-f-H-v.txt
  printf '%s\t%s\t%s\t%s\t%s\n' i2.zpool-events-f-H-v.txt i2 "$rc (SIGTERM)" - "zpool events -f -H -v" >> "$MAN"
  cap i3 zpool-events-v.txt "zpool events -v"
}

throttle_rd() { # qdev-id bytes/s (0 = off)
  vm_qmp "{\"execute\":\"block_set_io_throttle\",\"arguments\":{\"device\":\"drv-$1\",\"bps\":0,\"bps_rd\":$2,\"bps_wr\":0,\"iops\":0,\"iops_rd\":0,\"iops_wr\":0}}" >/dev/null || say "throttle $1 failed"
}

tank_state() {
  local s=$1
  cap "$s" zpool-status-p-P.txt   "zpool status -p -P tank"
  cap "$s" zpool-status.txt       "zpool status tank"
  [ $JSON_OK = 1 ] && cap "$s" zpool-status-j.json "zpool status -j --json-int -p -P tank"
  cap "$s" zpool-list-Hp.txt      "zpool list -Hp tank"
}

step_j() {
  say "j: scrub in progress / paused; permanent errors on a non-redundant pool"
  g "zpool create -f -o ashift=12 -O compression=off tank '$ATA3' && dd if=/dev/urandom of=/tank/victim.bin bs=1M count=64 status=none && dd if=/dev/urandom of=/tank/other.bin bs=1M count=32 status=none && zpool sync tank" || return 1
  throttle_rd ata3 1048576
  g "zpool scrub tank" || return 1
  wait_status tank 'scrub in progress' 60 || say "no scrub seen"
  sleep 3
  tank_state j1-scrubbing
  cap j2-paused zpool-scrub-p.txt "zpool scrub -p tank"
  tank_state j2-paused
  g "zpool scrub tank"
  throttle_rd ata3 0
  g "zpool wait -t scrub tank"
  tank_state j3-scrubbed
  # overwrite 512 KiB at the on-disk place of victim.bin's 9th record (found with zdb):
  # disk byte offset = DVA offset + 4 MiB (labels + boot area) + 1 MiB (start of partition 1)
  local dva
  dva=$(vm_run "zdb -ddddd tank/ \$(stat -c %i /tank/victim.bin) | awk '\$2 == \"L0\" && ++n == 9 {split(\$3, a, \":\"); print a[2]; exit}'")
  say "victim.bin record 9 at DVA offset 0x$dva"
  [ -n "$dva" ] || return 1
  g "dd if=/dev/urandom of='$ATA3' bs=4096 seek=\$(( (0x$dva + 5242880) / 4096 )) count=128 oflag=direct conv=notrunc status=none" || return 1
  cap j4-errors zpool-scrub-w.txt "zpool scrub -w tank"
  tank_state j4-errors
  cap j4-errors zpool-status-v.txt "zpool status -v tank"
  cap j4-errors zpool-status-v-p-P.txt "zpool status -v -p -P tank"
  [ $JSON_OK = 1 ] && cap j4-errors zpool-status-j-v.json "zpool status -j --json-int -v -p -P tank"
  cap j4-errors zpool-status-x.txt "zpool status -x tank"
  cap j4-errors zpool-events-v.txt "zpool events -v tank"
}

readme() {
  local R=$OUT/README.md kver zver qver
  kver=$(cat "$OUT/a.uname-r.txt" 2>/dev/null); zver=$(tr '\n' ' ' < "$OUT/a.version.txt" 2>/dev/null)
  qver=$(qemu-system-x86_64 --version | head -1)
  {
    echo "# Captured OpenZFS $ZFS_VERSION output"
    echo
    echo "Real output of ZFS and disk tools, captured by \`e2e/capture.sh\` (see e2e/README.md) in a QEMU"
    echo "VM. **Never edit these files**: each is the command's stdout byte for byte; a non-empty stderr is"
    echo "kept beside it as \`FILE.stderr\`. Re-capture instead."
    echo
    echo "- ZFS: \`$zver\` (Debian package $(. "$OUT/.image-env" 2>/dev/null; echo "${ZFS_USERLAND:-?}"), kernel module built from zfs-dkms of the same version)"
    echo "- kernel: \`$kver\` (Debian bookworm), guest hostid 5a776174, hostname zwatch-e2e"
    echo "- $qver, machine q35, $(. "$OUT/.image-env" 2>/dev/null; echo "${ACCEL:-tcg}")"
    echo "- captured: $(paste -sd ';' "$OUT/.dates" 2>/dev/null | sed 's/;/; /g' || date -u +%F)"
    [ -f "$OUT/.run" ] && echo "- run: $(tr '\n' ' ' < "$OUT/.run")"
    echo
    echo "## Disks"
    echo
    echo '```'
    vm_disks
    echo '```'
    echo
    echo "smartctl's exit status is a bit mask (bit 0 command line, bit 1 device open failed, bit 2 SMART"
    echo "command failed, bit 3 disk failing, bit 4 prefail attributes <= threshold, bit 5 past failures,"
    echo "bit 6 error log, bit 7 self-test log). The exit column records it for every capture."
    echo
    echo "## Scenario steps"
    echo
    echo "Steps run in the order a, b, d, c, c2, c3, e, f, g, h, i in one VM, each on the pool state the previous"
    echo "left; step j only uses its own pool (in this directory it may come from a separate VM boot: see .run);"
    echo "steps k and kbulk run in a fresh VM of their own (a second boot), step l in a third (with PCIe"
    echo "hotplug ports); lnative in a fourth (native PCIe hotplug), only when asked for (capture.sh lnative);"
    echo "m in a boot of its own, only when asked for (capture.sh m)."
    echo
    local s
    for s in a b d c c2 c3 e f g h i j k kbulk l lnative m; do
      echo "- **step $s**: ${NOTES[$s]}"
    done
    echo
    echo "## Files"
    echo
    echo "| file | step | exit | ms | command (run by bash as root in the guest) |"
    echo "| --- | --- | --- | --- | --- |"
    while IFS=$'\t' read -r f s rc ms cmd; do
      local extra=""; [ -f "$OUT/$f.stderr" ] && extra=" (+ \`$f.stderr\`)"
      echo "| \`$f\`$extra | $s | $rc | $ms | \`${cmd//|/\\|}\` |"
    done < "$MAN"
    echo
    echo "QMP commands sent by the host are stored as \`*.qmp-*.json\` (the QMP reply)."
  } > "$R"
  say "wrote $R"
}

step_m() {
  say "m: the events of a zpool destroy"
  g "zpool create -f -o ashift=12 gone '$VD6' && dd if=/dev/zero of=/gone/f bs=1M count=8 status=none && zpool sync gone && zpool events -c" || return 1
  g "zpool destroy gone" || return 1
  cap m1-destroyed zpool-events-v.txt "zpool events -v"
  cap m1-destroyed zpool-events-H-v.txt "zpool events -H -v"
  cap m1-destroyed zpool-import-D.txt "zpool import -D -d /dev/disk/by-id"
}

# shellcheck source=capture_datasets.sh
source "$HERE/capture_datasets.sh"
# shellcheck source=capture_kernel.sh
source "$HERE/capture_kernel.sh"

main() {
  if [ "${1:-}" = readme ]; then readme; return; fi
  local steps=("$@") own=0
  if [ ${#steps[@]} -eq 0 ]; then
    steps=(a b d c c2 c3 e f g h i j)
    rm -f "$OUT"/* "$MAN" "$OUT/.run" "$OUT/.dates"
  fi
  local t0; t0=$(date +%s)
  # step l hot-unplugs virtio-blk and NVMe disks: they need PCIe root ports from boot on
  case " ${steps[*]} " in *" l "*|*" lnative "*) export ZW_HOTPLUG_PORTS=${ZW_HOTPLUG_PORTS:-3} ;; esac
  case " ${steps[*]} " in *" lnative "*) export ZW_PCIE_NATIVE_HOTPLUG=1 ;; esac
  if ! vm_running; then vm_boot || exit 1; own=1; fi
  { cat "$(cat "$ZW_VM_DIR/image")/env"; echo "ACCEL=$(cat "$ZW_VM_DIR/accel")"; } > "$OUT/.image-env"
  for s in "${steps[@]}"; do
    "step_$s" || say "step $s FAILED"
  done
  if [ $# -eq 0 ]; then  # k uses disks the steps above hold: a fresh VM
    vm_shutdown; vm_boot || exit 1; own=1
    step_k || say "step k FAILED"
    step_kbulk || say "step kbulk FAILED"
    vm_shutdown; ZW_HOTPLUG_PORTS=${ZW_HOTPLUG_PORTS:-3} vm_boot || exit 1
    step_l || say "step l FAILED"
  fi
  if [ $# -eq 0 ]; then
    echo "$(date -u +%F) (full run)" > "$OUT/.dates"
  else
    grep -qxF "$(date -u +%F) (steps $*)" "$OUT/.dates" 2>/dev/null || echo "$(date -u +%F) (steps $*)" >> "$OUT/.dates"
  fi
  if [ $# -eq 0 ]; then
    echo "full capture.sh run of $(( $(date +%s) - t0 )) s (boot to ready ${ZW_BOOT_SECONDS%.*} s, $(cat "$ZW_VM_DIR/accel" 2>/dev/null))" > "$OUT/.run"
  elif [ $own = 1 ]; then
    echo "; steps '$*' re-run in a separate boot: $(( $(date +%s) - t0 )) s (boot to ready ${ZW_BOOT_SECONDS%.*} s)" >> "$OUT/.run"
  fi
  readme
  [ $own = 1 ] && [ -z "${ZW_KEEP_VM:-}" ] && vm_shutdown
  return 0
}
main "$@"
