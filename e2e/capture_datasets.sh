# capture_datasets.sh — capture step k (sourced by capture.sh): datasets, encryption keys,
# unmounted datasets, snapshots named as the snapshot tools name them, an interrupted
# receive, exported pools and `zpool import`, events, and a listing of 50,000 snapshots.
# Self-contained: it uses every disk it needs from a fresh VM (capture.sh boots one).
# shellcheck shell=bash

# The datasets collector's -o list (zfs.DatasetPropColumns), in order.
DSCOLS=name,type,used,avail,usedbysnapshots,quota,refquota,mounted,canmount,mountpoint,encryption,encryptionroot,keystatus,keylocation,keyformat,readonly,receive_resume_token
DSLIST="zfs list -Hp -t filesystem,volume -o $DSCOLS"
SNLIST="zfs list -Hp -t snapshot -o name,creation,used -s creation"
K_PASS='correct horse battery staple'

# the datasets + snapshots listings of one state
ds_state() {
  cap "$1" zfs-list-datasets.txt "$DSLIST"
  [ "${2:-}" = snaps ] && cap "$1" zfs-list-snapshots.txt "$SNLIST"
  return 0
}
# events since the last clear, then clear the ring
events_since() { cap "$1" zpool-events-v.txt "zpool events -v"; g "zpool events -c" >/dev/null; }

# k_name EPOCH FORMAT — a UTC date for a snapshot name
k_name() { date -u -d "@$1" "+$2"; }

# k_snapshots NOW — the snapshot tools' names, each created with the guest clock set to the
# time its name says (creation is the kernel's wall clock when the snapshot is synced)
k_snapshots() {
  local now=$1 d=86400 h=3600 t i sched=$ZW_VM_DIR/share/k-snapshots.tsv
  : > "$sched"
  add() { printf '%s\t%s\n' "$1" "$2" >> "$sched"; }   # epoch, dataset@name
  for i in 10 9 8 7 6 5 4; do                        # sanoid: daily at 00:00:01, newest 4 days old
    t=$(( (now / d - i) * d + 1 ))
    add $t "nas/media@$(k_name $t autosnap_%Y-%m-%d_%H:%M:%S_daily)"
  done
  t=$(( (now / d - 10) * d + 1 )); add $((t + 1)) "nas/media@$(k_name $t autosnap_%Y-%m-%d_%H:%M:%S_monthly)"
  for i in 1 2 3 4 5; do t=$(( (now / d - 4) * d + i * h + 1 )); add $t "nas/media@$(k_name $t autosnap_%Y-%m-%d_%H:%M:%S_hourly)"; done
  t=$(( (now / d - 4) * d + 6 * h )); add $t "nas/media@$(k_name $t syncoid_zwatch-e2e_%Y-%m-%d:%H:%M:%S-GMT00:00)"
  for i in 9 8 7 6 5; do                             # zfs-auto-snapshot: daily, newest 5 days old
    t=$(( (now / d - i) * d )); add $t "nas/secret@$(k_name $t zfs-auto-snap_daily-%Y-%m-%d-%H%M)"
  done
  for i in 1 2 3 4; do t=$(( (now / d - 5) * d + i * 900 )); add $t "nas/secret@$(k_name $t zfs-auto-snap_frequent-%Y-%m-%d-%H%M)"; done
  t=$(( (now / d - 5) * d + 2 * h )); add $t "nas/secret@$(k_name $t zfs-auto-snap_hourly-%Y-%m-%d-%H%M)"
  t=$(( (now / d - 5) * d + 2 * h + 60 )); add $t "nas/secret/photos@$(k_name $t zfs-auto-snap_hourly-%Y-%m-%d-%H%M)"
  t=$(( now - 30 * d )); add $t "nas/My Documents@$(k_name $t auto-%Y%m%d.%H%M-2w)"   # FreeNAS 9-11
  for i in 8 7 6 5 4 3; do                           # TrueNAS periodic task: daily at 00:00
    t=$(( (now / d - i) * d )); add $t "nas/My Documents@$(k_name $t auto-%Y-%m-%d_%H-%M)"
  done
  for i in 0 1 2 3 4 5; do                           # zrepl: every hour, newest 6 days old
    t=$(( (now / d - 6) * d + i * h )); add $t "nas/quota@$(k_name $t zrepl_%Y%m%d_%H%M%S_000)"
  done
  for i in 7 6 5 4; do t=$(( (now / d - i) * d )); add $t "nas/vault@$(k_name $t pyznap_%Y-%m-%d_%H:%M:%S_daily)"; done
  for i in 1 2; do t=$(( (now / d - 4) * d + i * h )); add $t "nas/vault@$(k_name $t pyznap_%Y-%m-%d_%H:%M:%S_hourly)"; done
  t=$(( now - 2 * d )); add $t "nas/vol@$(k_name $t zfs-auto-snap_hourly-%Y-%m-%d-%H%M)"
  for i in 3 2 1; do t=$(( now - i * h )); add $t "nas/ro@$(k_name $t autosnap_%Y-%m-%d_%H:00:01_hourly)"; done
  sort -n -o "$sched" "$sched"
  # the guest runs the schedule: clock to each time, snapshot; 24 MB of new data in nas/media
  # before the syncoid snapshot, so the incremental stream to the backup is long enough to cut
  g "set -e; while IFS=\$'\t' read -r t s; do date -s @\$t >/dev/null
       case \$s in *@syncoid_*) dd if=/dev/urandom of=/srv/media/new.raw bs=1M count=24 status=none; sync ;; esac
       zfs snapshot \"\$s\"; done < /mnt/host/k-snapshots.tsv"
  local rc=$?
  g "date -s @$(date +%s) >/dev/null"                # back to the host's (true) time
  g "zfs snapshot nas@manual-before-upgrade"
  return $rc
}

step_k() {
  say "k: datasets, keys, unmounted datasets, snapshot names, interrupted receive, exported pools"
  local now keydir=/etc/zfs/keys
  g "zpool events -c" >/dev/null
  g "zpool create -f -o ashift=12 nas mirror $VD1 $VD2 && zpool create -f -o ashift=12 backup $VD3 && zpool create -f -o ashift=12 offsite mirror $SD1 $SD2" || return 1
  events_since k0-created
  g "mkdir -p $keydir && chmod 700 $keydir && head -c 32 /dev/urandom > $keydir/secret.key && chmod 600 $keydir/secret.key && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > $keydir/archive.hex && chmod 600 $keydir/archive.hex" || return 1
  g "zfs create -o mountpoint=/srv/media nas/media && zfs create -o encryption=aes-256-gcm -o keyformat=raw -o keylocation=file://$keydir/secret.key nas/secret && zfs create nas/secret/photos && printf '%s\n' '$K_PASS' | zfs create -o encryption=on -o keyformat=passphrase -o keylocation=prompt nas/vault && zfs create -o encryption=on -o keyformat=hex -o keylocation=file://$keydir/archive.hex -o canmount=noauto nas/archive" || return 1
  g "zfs create 'nas/My Documents' && zfs create -o mountpoint=legacy nas/legacy && zfs create -o mountpoint=none nas/nomount && zfs create -o canmount=off nas/off && zfs create -o canmount=noauto nas/noauto && zfs create -o readonly=on nas/ro && zfs create -o quota=200M -o refquota=100M nas/quota && zfs create -V 64M nas/vol && zfs create -s -V 1G nas/sparsevol" || return 1
  g "dd if=/dev/urandom of=/srv/media/a.raw bs=1M count=4 status=none && dd if=/dev/urandom of=/nas/secret/photos/IMG_0001.jpg bs=1M count=2 status=none && echo hello > '/nas/My Documents/letter.txt' && dd if=/dev/urandom of=/nas/quota/q.raw bs=1M count=8 status=none && udevadm settle && dd if=/dev/urandom of=/dev/zvol/nas/vol bs=1M count=4 status=none; zpool sync" || return 1
  now=$(vm_run "date +%s")
  k_snapshots "$now" || say "k: snapshot schedule failed"
  cap k1-healthy date-s.txt "date +%s"
  ds_state k1-healthy snaps
  cap k1-healthy zfs-list-H-snapshots.txt "zfs list -H -t snapshot -o name,creation,used -s creation"
  cap k1-healthy zfs-list-Hp-roots.txt "zfs list -Hp -o name,used,avail,quota,refquota nas backup offsite"
  cap k1-healthy zpool-list-H-o-name.txt "zpool list -H -o name"
  cap k1-healthy zfs-get-Hp-encryption.txt "zfs get -Hp -r -t filesystem encryption,keystatus,keylocation,keyformat,encryptionroot nas"
  cap k1-healthy zfs-bookmark.txt "zfs bookmark nas/media@$(k_name $(( (now / 86400 - 4) * 86400 + 1 )) autosnap_%Y-%m-%d_%H:%M:%S_daily) nas/media#kept"
  cap k1-healthy with-bookmark.zfs-list-snapshots.txt "$SNLIST nas/media"
  events_since k1-healthy

  say "k2: unknown property, dataset that does not exist"
  cap k2-badprop zfs-list-datasets.txt "zfs list -Hp -t filesystem,volume -o name,type,used,keystatuz"
  cap k2-badprop zfs-list-two-bad.txt "zfs list -Hp -t filesystem,volume -o name,notaprop,alsonot"
  cap k2-nonexistent zfs-list-datasets.txt "$DSLIST nas 'nas/gone' nas/media"
  cap k2-nonexistent zfs-list-snapshots.txt "$SNLIST nas/gone"
  k_vanish

  say "k3: replication to pool backup, the last receive cut half way"
  local first sync
  first=$(vm_run "zfs list -H -t snapshot -o name -s creation nas/media | head -1")
  sync=$(vm_run "zfs list -H -t snapshot -o name -s creation nas/media | grep @syncoid_ | tail -1")
  g "zfs send '$first' | zfs receive -u backup/media" || return 1
  cap k3-interrupted zfs-send-receive-s.txt "set -o pipefail; zfs send -I '$first' '$sync' | head -c 12000000 | zfs receive -s -u backup/media"
  ds_state k3-interrupted snaps
  cap k3-interrupted zfs-get-Hp-receive_resume_token.txt "zfs get -Hp receive_resume_token backup/media"
  cap k3-interrupted zfs-send-t-nvP.txt "zfs send -nvP -t \$(zfs get -Hp -o value receive_resume_token backup/media)"
  events_since k3-interrupted

  say "k4: key unloaded (file and prompt), key file missing"
  g "zfs unmount nas/secret/photos; zfs unmount nas/secret && zfs unload-key nas/secret && zfs unmount nas/vault && zfs unload-key nas/vault && zfs unload-key nas/archive" || return 1
  events_since k4-locked
  ds_state k4-locked
  cap k4-locked zfs-mount-a.txt "zfs mount -a"
  cap k4-locked zfs-mount-secret.txt "zfs mount nas/secret"
  cap k4-locked zfs-load-key-prompt-no-tty.txt "zfs load-key nas/vault < /dev/null"
  g "mv $keydir/archive.hex /root/archive.hex.moved"
  cap k4-keyfile-missing zfs-load-key.txt "zfs load-key nas/archive"
  cap k4-keyfile-missing ls-l-keys.txt "ls -l $keydir"
  g "head -c 31 /dev/urandom > $keydir/secret.key.short && cp $keydir/secret.key /root/secret.key.saved && mv $keydir/secret.key.short $keydir/secret.key"
  cap k4-keyfile-short zfs-load-key.txt "zfs load-key nas/secret"
  g "cp /root/secret.key.saved $keydir/secret.key && chmod 600 $keydir/secret.key && mv /root/archive.hex.moved $keydir/archive.hex"
  cap k4-unlocked zfs-load-key-a.txt "zfs load-key nas/secret && zfs load-key nas/archive && printf '%s\n' '$K_PASS' | zfs load-key nas/vault"
  cap k4-unlocked zfs-mount-a.txt "zfs mount -a"
  ds_state k4-unlocked
  events_since k4-unlocked

  say "k5: dataset unmounted, files written into its mountpoint on the root disk"
  g "zfs unmount nas/media" || return 1
  events_since k5-unmounted
  g "mkdir -p /srv/media/import/2026 && printf 'photo\n' > /srv/media/import/2026/IMG_2001.jpg && dd if=/dev/urandom of=/srv/media/import/backup.tar bs=1k count=300 status=none && ln -s /etc /srv/media/etc-link"
  ds_state k5-unmounted
  cap k5-unmounted find-mountpoint.txt "find /srv/media -printf '%y %s %p\n' | sort -k3"
  cap k5-unmounted stat-dev.txt "stat -c '%d %m %n' /srv/media /srv /nas"
  cap k5-unmounted zfs-mount.txt "zfs mount nas/media"
  cap k5-remounted find-mountpoint.txt "find /srv/media -maxdepth 1 -printf '%y %s %p\n' | sort -k3"
  events_since k5-remounted

  say "k6: a mountpoint with a tab and one with a space"
  g "zfs create -o mountpoint=\$'/srv/tab\there' nas/tabbed && zfs create -o 'mountpoint=/srv/with space' nas/spaced"
  ds_state k6-tab-mountpoint
  g "zfs destroy nas/tabbed && zfs destroy nas/spaced"

  k_import || say "k7: import captures failed"
}

# k_vanish — datasets destroyed while zfs list runs: keep the first listing that lost one
k_vanish() {
  say "k2: provoking 'dataset does not exist' (create/destroy loop beside zfs list)"
  local id; id=$(vm_spawn "for i in \$(seq 400); do zfs create nas/churn\$i && zfs destroy nas/churn\$i; done")
  cap k2-vanished zfs-list-datasets.txt "for i in \$(seq 60); do out=\$($DSLIST 2>/tmp/err); rc=\$?; if grep -q 'does not exist' /tmp/err; then printf '%s\n' \"\$out\"; cat /tmp/err >&2; exit \$rc; fi; done; echo 'not provoked in 60 tries' >&2; exit 99"
  vm_stop "$id" >/dev/null 2>&1
  g "for d in \$(zfs list -H -o name | grep '^nas/churn'); do zfs destroy \$d; done; true"
}

# k_import — pool 'offsite' exported, with and without its disks; the cache file's view
k_import() {
  say "k7: zpool import with nothing to import, exported, one and both disks missing"
  cap k7-none zpool-import.txt "zpool import"
  cap k7-none zpool-import-c.txt "zpool import -c /etc/zfs/zpool.cache"
  g "cp /etc/zfs/zpool.cache /root/zpool.cache.boot && zpool export offsite" || return 1
  events_since k7-exported
  cap k7-exported zpool-import.txt "zpool import"
  cap k7-exported zpool-import-c.txt "zpool import -c /etc/zfs/zpool.cache"
  cap k7-exported zpool-import-c-before-export.txt "zpool import -c /root/zpool.cache.boot"
  cap k7-exported zpool-list-H-o-name.txt "zpool list -H -o name"
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd2"}}' > "$OUT/k7-missing.qmp-device_del.json"
  g "for i in \$(seq 100); do [ -e /dev/disk/by-id/wwn-0x5000c500a0000002 ] || exit 0; sleep 0.2; done; exit 1" || say "sd2 still present"
  cap k7-missing zpool-import.txt "zpool import"
  cap k7-missing zpool-import-c-before-export.txt "zpool import -c /root/zpool.cache.boot"
  vm_qmp '{"execute":"device_del","arguments":{"id":"sd1"}}' > "$OUT/k7-both-missing.qmp-device_del.json"
  g "for i in \$(seq 100); do [ -e /dev/disk/by-id/wwn-0x5000c500a0000001 ] || exit 0; sleep 0.2; done; exit 1" || say "sd1 still present"
  cap k7-both-missing zpool-import.txt "zpool import"
  cap k7-both-missing zpool-import-c-before-export.txt "zpool import -c /root/zpool.cache.boot"
  cap k7-both-missing zpool-import-offsite.txt "zpool import offsite"
  local n
  for n in 1 2; do
    vm_qmp "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"drv-sd${n}k\",\"file\":{\"driver\":\"file\",\"filename\":\"$ZW_VM_DIR/disks/sd$n.raw\"}}}" >/dev/null
    vm_qmp "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"scsi-hd\",\"bus\":\"scsi0.0\",\"scsi-id\":$((n-1)),\"lun\":0,\"drive\":\"drv-sd${n}k\",\"id\":\"sd$n\",\"serial\":\"ZWS000$n\",\"wwn\":$((0x5000c500a0000000 + n)),\"vendor\":\"SEAGATE\",\"product\":\"ST4000NM0035\"}}" >/dev/null
  done
  g "for i in \$(seq 150); do [ -e /dev/disk/by-id/wwn-0x5000c500a0000001-part1 ] && [ -e /dev/disk/by-id/wwn-0x5000c500a0000002-part1 ] && exit 0; sleep 0.2; done; exit 1" || say "sd1/sd2 did not come back"
  g "udevadm settle"
  cap k7-replugged zpool-import.txt "zpool import"
  g "zpool import -d /dev/disk/by-id offsite" || return 1
  events_since k7-imported
  cap k7-imported zpool-list-H-o-name.txt "zpool list -H -o name"
  cap k7-imported zpool-import-c.txt "zpool import -c /etc/zfs/zpool.cache"
}

# step kbulk (after k, same VM) — a listing of many snapshots, timed. 50 datasets, and rounds of
# `zfs snapshot -r bulk@autosnap_<hour>_hourly` (sanoid's recursive form), each round with the guest
# clock at the hour its name says. Under TCG one round (one txg, 51 snapshots) takes 10-20 s, and
# OpenZFS takes one snapshot per dataset per txg (zfs snapshot with two names of one dataset:
# "multiple snapshots of same fs not allowed"; zfs.sync.snapshot in a channel program: EAGAIN), so
# 50,000 snapshots cannot be made here in useful time: the benchmark scales this real listing.
K_BULK_ROUNDS=${K_BULK_ROUNDS:-20}
step_kbulk() {
  say "kbulk: $K_BULK_ROUNDS rounds of zfs snapshot -r over 50 datasets"
  local t0 t1 base
  g "zpool destroy bulk 2>/dev/null; zpool create -f -o ashift=12 -O compression=lz4 bulk $VD6 && for i in \$(seq -w 0 49); do zfs create bulk/d\$i; done" || return 1
  base=$(( $(date +%s) / 3600 * 3600 - K_BULK_ROUNDS * 3600 ))
  cap kbulk multiple-snapshots-one-fs.txt "zfs snapshot bulk/d00@a bulk/d00@b"
  t0=$(date +%s%N)
  g "for h in \$(seq 0 $((K_BULK_ROUNDS - 1))); do t=\$(( $base + h * 3600 + 1 )); date -s @\$t >/dev/null; zfs snapshot -r bulk@\$(date -u -d @\$t +autosnap_%Y-%m-%d_%H:%M:%S_hourly) || exit 1; done" || say "kbulk: zfs snapshot -r failed"
  t1=$(date +%s%N)
  g "date -s @$(date +%s) >/dev/null"
  say "$(( K_BULK_ROUNDS * 51 )) snapshots in $(( (t1 - t0) / 1000000 )) ms"
  cap kbulk zfs-list-snapshots.txt "$SNLIST"
  cap kbulk zfs-list-snapshots-time.txt "zfs list -H -t snapshot -o name | wc -l; for i in 1 2 3 4 5; do s=\$(date +%s%N); $SNLIST > /dev/null; e=\$(date +%s%N); echo \"run \$i: \$(( (e - s) / 1000000 )) ms\"; done"
}
