# scenarios_datasets.sh — the e2e scenarios of datasets, keys, snapshots, replication and pools
# that are not imported (issue 15). Sourced by e2e/run.sh after scenarios.sh (whose helpers it
# uses: g, ok, bad, check, figure, wait_note, quiet, sink, dump_notes, gnow, ms).
#
# Pools (disks the other scenarios leave alone): 'nas' on virtio-ZWV0003, 'offsite' a mirror of
# virtio-ZWV0004 + virtio-ZWV0005 (exported and imported again), 'backup' on a file in the
# guest's /var/tmp (the receive target). ds_prepare makes them before zwatch starts, because the
# stale snapshots are made with the guest clock set back, and the sink's and zwatch's times must
# not see that jump.
# shellcheck shell=bash

DS_KEY=/etc/zfs/keys/nas-secret.key
DS_OFFSITE_A=virtio-ZWV0004
DS_OFFSITE_B=virtio-ZWV0005
DS_BACKUP_IMG=/var/tmp/e2e-backup.img

# The alerts of this file and the rules.for they get in the guest config (their defaults, up to
# 10m, would dominate the run). DatasetNotMounted keeps 20s: a pool just created or imported is
# listed mounted=no for a poll or two before zfs mounts it (seen: vault during provision, offsite
# after zpool import), and 0s paged that. Only names the built zwatch knows: rules.for rejects others.
DS_ALERTS=(DatasetLocked=0s DatasetNotMounted=20s KeyFileProblem=0s PoolMissing=0s SnapshotStale=0s ReplicationInterrupted=0s)
ds_known_alerts() { # zwatch binary → those of DS_ALERTS its catalogue has, as ", A: 0s, B: 20s"
  local zw=$1 a out="" f; f=$(mktemp)
  for a in "${DS_ALERTS[@]}"; do
    printf 'rules: {for: {%s: %s}}\n' "${a%%=*}" "${a#*=}" > "$f"
    "$zw" check-config "$f" >/dev/null 2>&1 && out+=", ${a%%=*}: ${a#*=}"
  done
  rm -f "$f"; printf '%s' "$out"
}

# e2e_config_datasets: the guest config lines of the new collectors (zfs: block, appended)
e2e_config_datasets() {
  cat <<EOF
  datasets_interval: 5s
  snapshots_interval: 10s
  import_interval: 1m
EOF
}

# e2e_config_datasets_rules: the rules: lines (appended): backup/* is where snapshots are received
e2e_config_datasets_rules() {
  cat <<EOF
  replication:
    targets: [{dataset: "backup/*", max_age: 7d}]
EOF
}

ds_prepare() {
  local s=datasets now d=86400 i t names=""
  g "zpool create -f -o ashift=12 nas $D/virtio-ZWV0003 && zpool create -f -o ashift=12 offsite mirror $D/$DS_OFFSITE_A $D/$DS_OFFSITE_B && truncate -s 512M $DS_BACKUP_IMG && zpool create -f -o ashift=12 backup $DS_BACKUP_IMG" \
    || { bad $s "create pools nas, offsite, backup"; return 1; }
  g "mkdir -p /etc/zfs/keys && head -c 32 /dev/urandom > $DS_KEY && chmod 600 $DS_KEY && zfs create -o encryption=aes-256-gcm -o keyformat=raw -o keylocation=file://$DS_KEY nas/secret && zfs create -o mountpoint=/srv/media nas/media && zfs create nas/photos && zfs create nas/docs" \
    || { bad $s "create the datasets"; return 1; }
  g "dd if=/dev/urandom of=/nas/docs/a.raw bs=1M count=2 status=none && zfs snapshot nas/docs@r1 && dd if=/dev/urandom of=/nas/docs/b.raw bs=1M count=12 status=none && zfs snapshot nas/docs@r2" \
    || { bad $s "nas/docs snapshots"; return 1; }
  # sanoid's daily snapshots of nas/photos, the newest 3 days old: each made with the guest clock
  # at the time its name says, then the clock back to the host's
  now=$(vm_run "date +%s")
  for i in 5 4 3; do
    t=$(( (now / d - i) * d + 1 ))
    names+="date -s @$t >/dev/null && zfs snapshot nas/photos@$(date -u -d "@$t" +autosnap_%Y-%m-%d_%H:%M:%S_daily) && "
  done
  g "$names true"; local rc=$?
  g "date -s @$(date +%s) >/dev/null"
  [ $rc = 0 ] && ok $s "pools nas, offsite, backup; sanoid daily snapshots of nas/photos 3-5 days old" || bad $s "stale sanoid snapshots"
  return 0
}

# 1. key unloaded → DatasetLocked page (critical: nas/secret is meant to be mounted)
sc_ds_locked() {
  local s=locked t0 tn text
  quiet 11
  t0=$(vm_run "date +%s%N; zfs unmount nas/secret && zfs unload-key nas/secret >&2") || { bad $s "zfs unmount + unload-key nas/secret"; return 1; }
  t0=$(head -1 <<<"$t0")
  if tn=$(wait_note 40 --after "$t0" --alert DatasetLocked=firing --contains nas/secret); then
    ok $s "DatasetLocked page naming nas/secret" "$(ms "$tn" "$t0") ms"
    figure $s "zfs unload-key -> DatasetLocked in the sink" "$(ms "$tn" "$t0")" ms "guest clock; no zpool event for a key unload: bounded by zfs.datasets_interval 5s"
    text=$(sink --after "$t0" --alert DatasetLocked=firing --contains nas/secret --json | head -1)
    printf '%s\n' "$text" | jq . > "$E2E_OUT/locked.notification.json"
    [ "$(jq -r .severity <<<"$text")" = critical ] && ok $s "critical (canmount=on, mountpoint /nas/secret)" || bad $s "critical" "got $(jq -r .severity <<<"$text")"
    text=$(jq -r .text <<<"$text")
    grep -q 'zfs load-key nas/secret' <<<"$text" && grep -q 'zfs mount' <<<"$text" \
      && ok $s "text names zfs load-key nas/secret and zfs mount" || bad $s "text names zfs load-key nas/secret and zfs mount" "$(head -5 <<<"$text")"
  else
    bad $s "DatasetLocked page naming nas/secret" "none within 40 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "zfs load-key nas/secret && zfs mount nas/secret" || bad $s "zfs load-key + mount nas/secret"
  if tn=$(wait_note 40 --after "$t0" --alert DatasetLocked=resolved --contains nas/secret); then
    ok $s "resolved after zfs load-key + zfs mount" "$(ms "$tn" "$t0") ms"
  else
    bad $s "DatasetLocked resolved after load-key" "none within 40 s"; dump_notes "$t0"
  fi
}

# 2. dataset unmounted + a file written to its mountpoint → critical DatasetNotMounted naming it
sc_ds_unmounted() {
  local s=unmounted t0 tn text
  quiet 11
  t0=$(vm_run "date +%s%N; zfs unmount nas/media && mkdir -p /srv/media/import && dd if=/dev/urandom of=/srv/media/import/IMG_0001.jpg bs=1k count=300 status=none") \
    || { bad $s "zfs unmount nas/media + write underneath"; return 1; }
  if tn=$(wait_note 60 --after "$t0" --alert DatasetNotMounted=firing --contains nas/media --severity critical); then
    ok $s "critical DatasetNotMounted naming nas/media" "$(ms "$tn" "$t0") ms"
    figure $s "zfs unmount + file written -> critical DatasetNotMounted" "$(ms "$tn" "$t0")" ms "guest clock; zfs.datasets_interval 5s + rules.for.DatasetNotMounted 20s"
    text=$(sink --after "$t0" --alert DatasetNotMounted=firing --contains nas/media --severity critical --json | head -1 | jq -r .text)
    printf '%s\n' "$text" > "$E2E_OUT/unmounted.notification.txt"
    grep -q '/srv/media' <<<"$text" && ok $s "text names the mountpoint /srv/media" || bad $s "text names /srv/media" "$(head -5 <<<"$text")"
    grep -q 'IMG_0001.jpg' <<<"$text" && ok $s "text names the file written underneath" || bad $s "text names IMG_0001.jpg" "$(head -8 <<<"$text")"
    grep -qE '\b1 file' <<<"$text" && ok $s "text counts 1 file" || bad $s "text counts 1 file" "$(head -8 <<<"$text")"
  else
    bad $s "critical DatasetNotMounted naming nas/media" "none within 60 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "mv /srv/media/import /root/media-import && zfs mount nas/media && mv /root/media-import /srv/media/import" || bad $s "move aside, zfs mount nas/media, move back"
  if tn=$(wait_note 40 --after "$t0" --alert DatasetNotMounted=resolved --contains nas/media); then
    ok $s "resolved after zfs mount" "$(ms "$tn" "$t0") ms"
  else
    bad $s "DatasetNotMounted resolved after zfs mount" "none within 40 s"; dump_notes "$t0"
  fi
}

# 3. key file removed → KeyFileProblem (warning: the next boot's load-key fails)
sc_ds_keyfile() {
  local s=keyfile t0 tn
  t0=$(vm_run "date +%s%N; mv $DS_KEY /root/nas-secret.key.moved")
  if tn=$(wait_note 40 --after "$t0" --alert KeyFileProblem=firing --contains "$DS_KEY"); then
    ok $s "KeyFileProblem naming $DS_KEY" "$(ms "$tn" "$t0") ms"
    local n; n=$(sink --after "$t0" --alert KeyFileProblem=firing --contains "$DS_KEY" --json | head -1)
    [ "$(jq -r .severity <<<"$n")" = warning ] && ok $s "severity warning" || bad $s "severity warning" "got $(jq -r .severity <<<"$n")"
    grep -q nas/secret <<<"$(jq -r .text <<<"$n")" && ok $s "text names nas/secret" || bad $s "text names nas/secret"
  else
    bad $s "KeyFileProblem naming $DS_KEY" "none within 40 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "mv /root/nas-secret.key.moved $DS_KEY"
  if tn=$(wait_note 40 --after "$t0" --alert KeyFileProblem=resolved); then
    ok $s "resolved after the key file is back" "$(ms "$tn" "$t0") ms"
  else
    bad $s "KeyFileProblem resolved" "none within 40 s"; dump_notes "$t0"
  fi
}

# 4. a DEGRADED pool exported → PoolMissing with the import command, its DEGRADED alert kept
# (no false all-clear); imported again → PoolMissing resolved; disk online → the rest resolves
sc_ds_missing() {
  local s=missing t0 tn text n
  quiet 11
  t0=$(gnow)
  g "zpool offline offsite $DS_OFFSITE_B" || { bad $s "zpool offline offsite"; return 1; }
  if ! tn=$(wait_note 40 --after "$t0" --status firing --contains "$DS_OFFSITE_B"); then
    bad $s "an alert for the offline disk of offsite" "none within 40 s"; dump_notes "$t0"
  fi
  sleep 2
  t0=$(vm_run "date +%s%N; zpool export offsite >&2") || { bad $s "zpool export offsite"; return 1; }
  if tn=$(wait_note 60 --after "$t0" --alert PoolMissing=firing --contains offsite); then
    ok $s "PoolMissing page for the exported offsite" "$(ms "$tn" "$t0") ms"
    figure $s "zpool export -> PoolMissing in the sink" "$(ms "$tn" "$t0")" ms "guest clock (pool_export event, then zpool import)"
    text=$(sink --after "$t0" --alert PoolMissing=firing --contains offsite --json | head -1 | jq -r .text)
    printf '%s\n' "$text" > "$E2E_OUT/missing.notification.txt"
    grep -q 'zpool import -d /dev/disk/by-id offsite' <<<"$text" && ok $s "text gives zpool import -d /dev/disk/by-id offsite" || bad $s "text gives the import command" "$(head -8 <<<"$text")"
  else
    bad $s "PoolMissing page for offsite" "none within 60 s"; dump_notes "$t0"
  fi
  sleep 10   # status polls: a false all-clear would go out now
  n=$(sink --count --after "$t0" --status resolved --contains offsite)
  [ "$n" = 0 ] && ok $s "no [RESOLVED] for offsite's DEGRADED alert after the export" || { bad $s "no resolved notice for offsite after the export" "$n"; dump_notes "$t0"; }
  t0=$(gnow)
  # The export's udev change events recreate the disks' by-id links; a loaded guest may not
  # have done so yet (seen: "no such pool available"), so wait for udev first, as a person would.
  g "udevadm settle -t 30; zpool import -d /dev/disk/by-id offsite" || bad $s "zpool import offsite"
  if tn=$(wait_note 60 --after "$t0" --alert PoolMissing=resolved --contains offsite); then
    ok $s "PoolMissing resolved after zpool import" "$(ms "$tn" "$t0") ms"
  else
    bad $s "PoolMissing resolved after zpool import" "none within 60 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "zpool online offsite $DS_OFFSITE_B && zpool wait -t resilver offsite"
  # the resolved alert may ride in a "firing" notification (the resilver's news of the same pool)
  if tn=$(wait_note 60 --after "$t0" --alert VdevState=resolved --contains "$DS_OFFSITE_B"); then
    ok $s "the offline disk's alert resolved after zpool online" "$(ms "$tn" "$t0") ms"
  else
    bad $s "offline disk's alert resolved after zpool online" "none within 60 s"; dump_notes "$t0"
  fi
}

# 4b. the pool gone for good: offsite DEGRADED and exported again, then `zwatch forget-pool offsite`
# → PoolMissing and the alerts it kept resolve (offsite stays exported: nothing after needs it)
sc_ds_forget() {
  local s=forget t0 tn
  quiet 11
  t0=$(gnow)
  g "zpool offline offsite $DS_OFFSITE_B" || { bad $s "zpool offline offsite"; return 1; }
  wait_note 40 --after "$t0" --alert VdevState=firing --contains "$DS_OFFSITE_B" >/dev/null || bad $s "VdevState for the offline disk of offsite" "none within 40 s"
  sleep 2
  t0=$(gnow)
  g "zpool export offsite" || { bad $s "zpool export offsite"; return 1; }
  if ! wait_note 60 --after "$t0" --alert PoolMissing=firing --contains offsite >/dev/null; then
    bad $s "PoolMissing for offsite exported again" "none within 60 s"; dump_notes "$t0"; return 1
  fi
  t0=$(gnow)
  if vm_run "zwatch forget-pool --config $G/zwatch.yaml offsite" > "$E2E_OUT/forget.out" 2>&1; then
    ok $s "zwatch forget-pool offsite exit 0"
  else
    bad $s "zwatch forget-pool offsite exit 0" "$(head -c 300 "$E2E_OUT/forget.out")"; return 1
  fi
  if tn=$(wait_note 40 --after "$t0" --alert PoolMissing=resolved --contains offsite); then
    ok $s "PoolMissing resolved after forget-pool" "$(ms "$tn" "$t0") ms"
  else
    bad $s "PoolMissing resolved after forget-pool" "none within 40 s"; dump_notes "$t0"
  fi
  if wait_note 20 --after "$t0" --alert VdevState=resolved --contains "$DS_OFFSITE_B" >/dev/null; then
    ok $s "the alert offsite kept (its OFFLINE disk) resolved after forget-pool"
  else
    bad $s "the alert offsite kept resolved after forget-pool" "none within 20 s"; dump_notes "$t0"
  fi
}

# 5. stale sanoid-named snapshots (made by ds_prepare) → SnapshotStale; a new one → resolved
sc_ds_stale() {
  local s=stale tn text t0
  if tn=$(wait_note 30 --alert SnapshotStale=firing --contains nas/photos); then
    ok $s "SnapshotStale naming nas/photos (sanoid daily, newest 3 days old)"
    text=$(sink --alert SnapshotStale=firing --contains nas/photos --json | head -1 | jq -r .text)
    printf '%s\n' "$text" > "$E2E_OUT/stale.notification.txt"
    grep -qi 'sanoid' <<<"$text" && ok $s "text names the tool (sanoid)" || bad $s "text names sanoid" "$(head -5 <<<"$text")"
    # it fired at zwatch's start; a run with the restart scenario restarted zwatch since
    local n; n=$(sink --count --status firing --alert SnapshotStale=firing --contains nas/photos)
    [ "$n" = 1 ] && ok $s "SnapshotStale paged once (also across zwatch restarts)" || { bad $s "SnapshotStale paged once" "$n pages"; dump_notes 0; }
  else
    bad $s "SnapshotStale naming nas/photos" "none within 30 s"; dump_notes 0
  fi
  t0=$(gnow)
  g "zfs snapshot nas/photos@\$(date -u +autosnap_%Y-%m-%d_%H:%M:%S_daily)"
  if tn=$(wait_note 40 --after "$t0" --alert SnapshotStale=resolved --contains nas/photos); then
    ok $s "resolved after a new sanoid snapshot" "$(ms "$tn" "$t0") ms"
  else
    bad $s "SnapshotStale resolved" "none within 40 s"; dump_notes "$t0"
  fi
}

# 6. a receive cut half way (zfs receive -s) → ReplicationInterrupted; zfs receive -A → resolved
sc_ds_interrupted() {
  local s=interrupted t0 tn text
  g "zfs send nas/docs@r1 | zfs receive -u backup/docs" || { bad $s "full send of nas/docs@r1 to backup/docs"; return 1; }
  t0=$(vm_run "date +%s%N; zfs send -i r1 nas/docs@r2 | head -c 6000000 | zfs receive -s -u backup/docs >&2; true" 2>/dev/null | head -1)
  if tn=$(wait_note 40 --after "$t0" --alert ReplicationInterrupted=firing --contains backup/docs); then
    ok $s "ReplicationInterrupted naming backup/docs" "$(ms "$tn" "$t0") ms"
    text=$(sink --after "$t0" --alert ReplicationInterrupted=firing --contains backup/docs --json | head -1 | jq -r .text)
    printf '%s\n' "$text" > "$E2E_OUT/interrupted.notification.txt"
    grep -q 'zfs send -t ' <<<"$text" && ok $s "text gives zfs send -t <token>" || bad $s "text gives zfs send -t" "$(head -5 <<<"$text")"
    grep -q 'zfs receive -A backup/docs' <<<"$text" && ok $s "text gives zfs receive -A backup/docs" || bad $s "text gives zfs receive -A backup/docs" "$(head -8 <<<"$text")"
  else
    bad $s "ReplicationInterrupted naming backup/docs" "none within 40 s"; dump_notes "$t0"
  fi
  t0=$(gnow)
  g "zfs receive -A backup/docs" || bad $s "zfs receive -A backup/docs"
  if tn=$(wait_note 40 --after "$t0" --alert ReplicationInterrupted=resolved --contains backup/docs); then
    ok $s "resolved after zfs receive -A" "$(ms "$tn" "$t0") ms"
  else
    bad $s "ReplicationInterrupted resolved" "none within 40 s"; dump_notes "$t0"
  fi
}

# 7. the snapshots collector's cost for 50,000 snapshots, in the guest. 50,000 real snapshots
# cannot be made under TCG (one snapshot per dataset per txg, 10-20 s per txg here: see
# testdata/captured/zfs-2.3.2/README.md step kbulk), so the listing parsed is DERIVED: the real
# kbulk listing (1,020 snapshots, 50 datasets) scaled by e2e/scale-snapshots.py. zfs list's own
# cost per snapshot is the real one of that capture (same image, same VM) and of this guest's.
sc_ds_snapcost() {
  local s=snapcost seed=$ZW_E2E_REPO/testdata/captured/zfs-2.3.2/kbulk.zfs-list-snapshots.txt
  local timef=$ZW_E2E_REPO/testdata/captured/zfs-2.3.2/kbulk.zfs-list-snapshots-time.txt n v r us_parse kept alloc nds ntot
  [ -f "$seed" ] || { bad $s "the real seed listing $seed"; return 1; }
  python3 "$HERE/scale-snapshots.py" "$seed" 50000 > "$E2E_SHARE/snap50k.txt" || { bad $s "scale the seed listing"; return 1; }
  n=$(wc -l < "$E2E_SHARE/snap50k.txt")
  g "cp $G/snap50k.txt /tmp/snap50k.txt" || return 1
  us_parse=$(vm_run "parsecost snapshots /tmp/snap50k.txt 5") || { bad $s "parsecost snapshots" "$us_parse"; return 1; }
  ok $s "zfs.SummarizeSnapshots reads the $n-line listing"
  figure $s "zwatch summary of a $n-snapshot listing (in-process)" "$(( us_parse / 1000 ))" ms "guest, e2e/parsecost: zfs.SummarizeSnapshots, mean of 5; listing derived from the real kbulk capture (e2e/scale-snapshots.py)"
  r=$(vm_run "parsecost snapshots-rss /tmp/snap50k.txt") || { bad $s "parsecost snapshots-rss" "$r"; return 1; }
  read -r v kept alloc nds ntot _ <<<"$r"
  figure $s "peak resident memory growth while streaming the $n-snapshot listing" "$v" KiB "guest, VmHWM before/after one streamed zfs.SummarizeSnapshots ($nds datasets, $ntot snapshots)"
  figure $s "heap kept by the summary / allocated while reading ($ntot snapshots)" "$kept / $alloc" KiB "guest, runtime.MemStats: HeapInuse after a GC minus before; TotalAlloc (garbage is resident until Go's first GC)"
  (( v <= 2048 )) && ok $s "peak resident memory growth <= 2 MB for $ntot snapshots" "$v KiB" || bad $s "peak resident memory growth <= 2 MB for $ntot snapshots" "$v KiB (kept $kept KiB, allocated $alloc KiB)"
  [ "$ntot" = "$n" ] && ok $s "every snapshot counted" || bad $s "every snapshot counted" "$ntot of $n"
  # zfs list itself, live: this guest's snapshots, median of 5
  r=$(vm_run "c=\$(zfs list -H -t snapshot -o name | wc -l); t=\$(TIMEFORMAT=%R; for i in 1 2 3 4 5; do { time zfs list -Hp -t snapshot -o name,creation,used -s creation >/dev/null; } 2>&1; done | sort -n | sed -n 3p); echo \$c \$t")
  figure $s "zfs list -Hp -t snapshot -o name,creation,used -s creation, live (${r% *} snapshots)" "${r#* }" s "guest wall time, median of 5"
  # zfs list of the real 1,020-snapshot capture, per snapshot, against the parse per line
  local zl_ms; zl_ms=$(grep -o 'run [0-9]*: [0-9]*' "$timef" 2>/dev/null | awk '{print $3}' | sort -n | sed -n 3p)
  if [ -n "$zl_ms" ]; then
    local cnt; cnt=$(head -1 "$timef")
    figure $s "zfs list of the capture's $cnt snapshots (kbulk, same image under TCG)" "$zl_ms" ms "testdata/captured/zfs-2.3.2/kbulk.zfs-list-snapshots-time.txt, median of 5"
    v=$(awk -v p="$us_parse" -v n="$n" -v z="$zl_ms" -v c="$cnt" 'BEGIN{printf "%.1f", 100 * (p / n) / (z * 1000 / c)}')
    figure $s "zwatch's share: parse per snapshot / zfs list per snapshot" "$v" % "parse: this guest; zfs list: the kbulk capture"
    awk -v v="$v" 'BEGIN{exit !(v <= 10)}' && ok $s "zwatch's parse <= 10 % of zfs list's own time per snapshot" "$v %" || bad $s "zwatch's parse <= 10 % of zfs list per snapshot" "$v %"
  fi
}

