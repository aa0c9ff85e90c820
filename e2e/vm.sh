#!/usr/bin/env bash
# vm.sh — drive a throw-away QEMU VM with real OpenZFS for the zwatch e2e harness.
#
#   e2e/vm.sh boot                 boot the VM (builds/reuses the image), wait until the agent is ready
#   e2e/vm.sh run CMD...           run CMD (args joined with spaces, interpreted by bash in the
#                                  guest); guest stdout -> stdout, stderr -> stderr, exits with CMD's status
#   e2e/vm.sh spawn CMD...         start CMD in the guest in the background, print its job id
#   e2e/vm.sh wait ID [TIMEOUT]    wait for a spawned job; prints its stdout/stderr, exits with its status
#   e2e/vm.sh peek ID              print a running job's stdout so far
#   e2e/vm.sh stop ID              SIGTERM a spawned job (by its guest pid), then wait for it
#   e2e/vm.sh qmp JSON             send one QMP command (qmp_capabilities is done for you); prints the reply
#   e2e/vm.sh disks                print the disk table (QEMU device id, kind, serial, expected by-id name)
#   e2e/vm.sh shutdown             sync in the guest, then QMP quit (kill by pid as a last resort)
#   e2e/vm.sh poweroff             graceful ACPI power-off (~60 s under TCG), then as shutdown
#   e2e/vm.sh kill                 QMP quit at once (then SIGTERM/SIGKILL of the qemu pid)
#   e2e/vm.sh status               is the VM running?
#
# One VM per ZW_VM_DIR; two VMs (e.g. both ZFS versions) can run side by side with different dirs.
#
# Can also be sourced as a library: `source e2e/vm.sh` defines vm_boot, vm_run, vm_spawn, vm_wait,
# vm_stop, vm_qmp, vm_shutdown, vm_poweroff, vm_running, vm_disks.
#
# Environment:
#   ZFS_VERSION      2.3.2 (default) | 2.1.11    selects the image (see build-image.sh)
#   ZW_VM_DIR        state dir (default /var/tmp/zwatch-e2e-vm): console.log, qmp.sock, qemu.pid,
#                    share/ (9p, mounted at /mnt/host in the guest), disks/ (fresh sparse raw files per boot)
#   ZW_ACCEL         auto (default) | kvm | tcg.  auto: uses a cached probe result; the first time it
#                    tries KVM with a short timeout and falls back to TCG if the guest never gets ready.
#   ZW_MEM           guest memory MiB (default 2048)   ZW_SMP  vCPUs (default: host cores)
#   ZW_BOOT_TIMEOUT  seconds to wait for the agent (default 300)
#   ZW_RUN_TIMEOUT   seconds `run` waits before giving up with status 124 (default 1800)
#   ZW_E2E_IMAGE     image dir already returned by build-image.sh for ZFS_VERSION (run.sh sets it,
#                    so boot does not ask build-image.sh again)
#   ZW_BOOT_ARGS     kernel arguments added to root/console (default: quiet, fast; see below)
#   ZW_HOTPLUG_PORTS empty PCIe root ports hp1..hpN (default 0): a virtio-blk-pci or nvme device
#                    device_add'ed into one (bus=hpN) can be hot-unplugged again with device_del
#   ZW_PCIE_NATIVE_HOTPLUG=1  those ports use PCIe native hotplug (the guest's pciehp) instead of q35's
#                    default ACPI PCI hotplug

ZW_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ZFS_VERSION=${ZFS_VERSION:-2.3.2}
ZW_VM_DIR=${ZW_VM_DIR:-/var/tmp/zwatch-e2e-vm}
ZW_CACHE=${ZW_E2E_CACHE:-/var/cache/zwatch-e2e}
ZW_Q=$ZW_VM_DIR/share/q

# Disk table: id|kind|size|serial|extra qemu -device options
# kind: scsi (scsi-hd on virtio-scsi, hot-unpluggable), virtio (virtio-blk-pci),
#       ata (ide-hd on the q35 AHCI controller, not hot-unpluggable), nvme (own NVMe controller)
ZW_DISKS=(
  "sd1|scsi|1G|ZWS0001|wwn=0x5000c500a0000001,vendor=SEAGATE,product=ST4000NM0035"
  "sd2|scsi|1G|ZWS0002|wwn=0x5000c500a0000002,vendor=SEAGATE,product=ST4000NM0035"
  "vd1|virtio|1G|ZWV0001|"
  "vd2|virtio|1G|ZWV0002|"
  "ata1|ata|1G|WD-WCC7K0000001|bus=ide.0,model=WDC WD40EFRX-68N32N0"
  "ata2|ata|1G|WD-WCC7K0000002|bus=ide.1,model=WDC WD40EFRX-68N32N0"
  "sd3|scsi|1G|ZWS0003|wwn=0x5000c500a0000003,vendor=SEAGATE,product=ST4000NM0035"
  "vd3|virtio|1G|ZWV0003|"
  "vd4|virtio|512M|ZWV0004|"
  "vd5|virtio|512M|ZWV0005|"
  "vd6|virtio|2G|ZWV0006|"
  "ata3|ata|1G|S3Z9NB0K000003|bus=ide.2,model=Samsung SSD 860 EVO 1TB"
  "nvme0|nvme|1G|ZWNVME0001|"
  "nvme1|nvme|1G|ZWNVME0002|"
)

_vm_log() { printf '[vm %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

vm_running() {
  local pid
  pid=$(cat "$ZW_VM_DIR/qemu.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q qemu "/proc/$pid/cmdline" 2>/dev/null
}

vm_disks() {
  local d id kind size serial extra byid
  printf '%-6s %-7s %-5s %-18s %s\n' ID KIND SIZE SERIAL EXPECTED-BY-ID
  for d in "${ZW_DISKS[@]}"; do
    IFS='|' read -r id kind size serial extra <<<"$d"
    case $kind in
      scsi) local w=${extra#wwn=0x}; w=${w%%,*}; byid="scsi-3$w wwn-0x$w" ;;
      virtio) byid="virtio-$serial" ;;
      ata) local m=${extra#*model=}; byid="ata-${m// /_}_$serial" ;;
      nvme) byid="nvme-QEMU_NVMe_Ctrl_$serial" ;;
    esac
    printf '%-6s %-7s %-5s %-18s %s\n' "$id" "$kind" "$size" "$serial" "$byid"
  done
}

# Kernel arguments that shorten a TCG boot (measured 2026-11-30: 42 s -> see e2e/README.md):
# a quiet serial console (every byte printed is emulated), and no unit that only waits for
# pools to import or udev to "settle" (the disks are blank at every boot; the agent runs
# `udevadm settle` itself before it says ready). zfs-zed still runs.
ZW_BOOT_ARGS=${ZW_BOOT_ARGS-quiet loglevel=3 systemd.show_status=false systemd.mask=systemd-udev-settle.service systemd.mask=zfs-import-cache.service systemd.mask=zfs-import-scan.service systemd.mask=zfs-mount.service}

_vm_qemu_args() { # $1 = image dir, $2 = accel
  local img=$1 accel=$2 d id kind size serial extra n=0
  local -n A=ZW_QEMU_ARGS
  A=(qemu-system-x86_64 -name zwatch-e2e -machine q35 -m "${ZW_MEM:-2048}" -smp "${ZW_SMP:-$(nproc)}"
     -display none -vga none -monitor none -nic none -no-reboot
     -serial "file:$ZW_VM_DIR/console.log"
     -qmp "unix:$ZW_VM_DIR/qmp.sock,server=on,wait=off"
     -pidfile "$ZW_VM_DIR/qemu.pid" -daemonize
     -kernel "$img/vmlinuz" -initrd "$img/initrd.img"
     -append "root=UUID=$(. "$img/env"; echo "$ROOT_UUID") rw console=ttyS0,115200 net.ifnames=0 mitigations=off $ZW_BOOT_ARGS"
     -drive "file=$img/root.img,if=none,id=root,format=raw,snapshot=on"
     -device virtio-blk-pci,drive=root,id=rootdisk
     -virtfs "local,path=$ZW_VM_DIR/share,mount_tag=host,security_model=none,id=share"
     -device virtio-scsi-pci,id=scsi0)
  if [ "$accel" = kvm ]; then A+=(-accel kvm -cpu host); else A+=(-accel tcg,thread=multi -cpu max); fi
  for d in "${ZW_DISKS[@]}"; do
    IFS='|' read -r id kind size serial extra <<<"$d"
    A+=(-drive "file=$ZW_VM_DIR/disks/$id.raw,if=none,id=drv-$id,format=raw,cache=writeback")
    case $kind in
      scsi)   A+=(-device "scsi-hd,bus=scsi0.0,scsi-id=$n,lun=0,drive=drv-$id,id=$id,serial=$serial${extra:+,$extra}"); n=$((n+1)) ;;
      virtio) A+=(-device "virtio-blk-pci,drive=drv-$id,id=$id,serial=$serial${extra:+,$extra}") ;;
      ata)    A+=(-device "ide-hd,drive=drv-$id,id=$id,serial=$serial${extra:+,$extra}") ;;
      nvme)   A+=(-device "nvme,drive=drv-$id,id=$id,serial=$serial${extra:+,$extra}") ;;
    esac
  done
  # PCIe native hotplug needs a root port per device; devices on the q35 root bus can't be unplugged
  for n in $(seq "${ZW_HOTPLUG_PORTS:-0}"); do
    A+=(-device "pcie-root-port,id=hp$n,bus=pcie.0,chassis=$n,slot=$n")
  done
  [ -n "${ZW_PCIE_NATIVE_HOTPLUG:-}" ] && A+=(-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off)
}

_vm_start() { # $1 image dir, $2 accel, $3 timeout → 0 ready, 1 not ready (VM killed)
  local img=$1 accel=$2 timeout=$3 t0 d id kind size serial extra
  rm -rf "$ZW_VM_DIR/share" "$ZW_VM_DIR/disks" "$ZW_VM_DIR/console.log" "$ZW_VM_DIR/qmp.sock" "$ZW_VM_DIR/qemu.pid"
  mkdir -p "$ZW_Q" "$ZW_VM_DIR/disks"
  for d in "${ZW_DISKS[@]}"; do
    IFS='|' read -r id kind size serial extra <<<"$d"
    truncate -s "$size" "$ZW_VM_DIR/disks/$id.raw"
  done
  _vm_qemu_args "$img" "$accel"
  printf '%q ' "${ZW_QEMU_ARGS[@]}" > "$ZW_VM_DIR/qemu.cmdline"
  t0=$(date +%s.%N)
  "${ZW_QEMU_ARGS[@]}" || { _vm_log "qemu failed to start"; return 2; }
  while [ ! -e "$ZW_VM_DIR/share/ready" ]; do
    if ! vm_running; then _vm_log "qemu exited during boot (see $ZW_VM_DIR/console.log)"; return 1; fi
    if (( $(date +%s) - ${t0%.*} > timeout )); then
      _vm_log "guest not ready after ${timeout}s with $accel"; _vm_kill; return 1
    fi
    sleep 0.2
  done
  ZW_BOOT_SECONDS=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}')
  echo "$accel" > "$ZW_VM_DIR/accel"
  return 0
}

_vm_kill() {
  local pid; pid=$(cat "$ZW_VM_DIR/qemu.pid" 2>/dev/null) || return 0
  vm_qmp '{"execute":"quit"}' >/dev/null 2>&1
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  rm -f "$ZW_VM_DIR/qemu.pid"
}

vm_boot() {
  if vm_running; then _vm_log "VM already running (pid $(cat "$ZW_VM_DIR/qemu.pid"))"; return 0; fi
  local img accel probe=$ZW_CACHE/accel-probe timeout=${ZW_BOOT_TIMEOUT:-300}
  # ZW_E2E_IMAGE: an image dir the caller just got from build-image.sh (run.sh), for this version
  img=${ZW_E2E_IMAGE:-}
  [ -n "$img" ] && [ -f "$img/env" ] || img=$(ZFS_VERSION=$ZFS_VERSION "$ZW_E2E_DIR/build-image.sh" | tail -1) || return 1
  mkdir -p "$ZW_VM_DIR"
  echo "$img" > "$ZW_VM_DIR/image"
  accel=${ZW_ACCEL:-auto}
  if [ "$accel" = auto ]; then
    if [ ! -w /dev/kvm ]; then accel=tcg
    elif [ -s "$probe" ]; then accel=$(cat "$probe")
    else
      _vm_log "probing KVM (falls back to TCG if the guest is not ready in ${ZW_KVM_PROBE_TIMEOUT:-60}s)"
      if _vm_start "$img" kvm "${ZW_KVM_PROBE_TIMEOUT:-60}"; then echo kvm > "$probe"
        _vm_log "ready in ${ZW_BOOT_SECONDS}s (kvm)"; return 0
      fi
      cp -f "$ZW_VM_DIR/console.log" "$ZW_CACHE/accel-probe-kvm-console.log" 2>/dev/null
      echo tcg > "$probe"; accel=tcg
      _vm_log "KVM unusable here; using TCG from now on (delete $probe to re-probe)"
    fi
  fi
  _vm_log "booting $(basename "$img") with $accel"
  _vm_start "$img" "$accel" "$timeout" || return 1
  _vm_log "ready in ${ZW_BOOT_SECONDS}s ($accel): $(tr '\n' ' ' < "$ZW_VM_DIR/share/ready")"
}

_vm_newid() { echo "$(date +%s%N)-$$-$RANDOM"; }

vm_spawn() { # prints job id
  vm_running || { _vm_log "VM not running"; return 125; }
  local id; id=$(_vm_newid)
  printf '%s\n' "$*" > "$ZW_Q/$id.tmp" && mv "$ZW_Q/$id.tmp" "$ZW_Q/$id.sh"
  echo "$id"
}

vm_wait() { # id [timeout]
  local id=$1 timeout=${2:-${ZW_RUN_TIMEOUT:-1800}} n=0 rc
  while [ ! -e "$ZW_Q/$id.rc" ]; do
    sleep 0.05; n=$((n+1))
    if (( n % 100 == 0 )); then
      vm_running || { _vm_log "VM died while waiting for job $id"; return 125; }
      (( n / 20 >= timeout )) && { _vm_log "timeout waiting for job $id"; return 124; }
    fi
  done
  cat "$ZW_Q/$id.out"; cat "$ZW_Q/$id.err" >&2
  rc=$(cat "$ZW_Q/$id.rc")
  rm -f "$ZW_Q/$id".*
  return "$rc"
}

vm_peek() { cat "$ZW_Q/$1.out" 2>/dev/null; }

vm_stop() { # id: SIGTERM the job's process in the guest, then collect it
  local id=$1 pid
  for _ in $(seq 100); do [ -s "$ZW_Q/$id.pid" ] && break; sleep 0.05; done
  pid=$(cat "$ZW_Q/$id.pid")
  vm_run "pkill -TERM -P $pid; kill -TERM $pid 2>/dev/null; true" >/dev/null
  vm_wait "$id" 60
}

vm_run() { local id; id=$(vm_spawn "$@") || return $?; vm_wait "$id"; }

vm_qmp() { # one QMP command as JSON
  python3 - "$ZW_VM_DIR/qmp.sock" "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(60); s.connect(sys.argv[1]); f = s.makefile("rw")
json.loads(f.readline())  # greeting
def cmd(c):
    f.write(json.dumps(c) + "\n"); f.flush()
    while True:
        r = json.loads(f.readline())
        if "return" in r or "error" in r:
            return r
        print(json.dumps(r), file=sys.stderr)  # asynchronous events
cmd({"execute": "qmp_capabilities"})
r = cmd(json.loads(sys.argv[2]))
print(json.dumps(r))
sys.exit(1 if "error" in r else 0)
EOF
}

vm_shutdown() { # the disks are throw-away and the root image is snapshot=on: sync, then QMP quit
  vm_running || { _vm_log "VM not running"; rm -f "$ZW_VM_DIR/qemu.pid"; return 0; }
  ZW_RUN_TIMEOUT=15 vm_run sync >/dev/null 2>&1
  _vm_kill
  _vm_log "VM stopped"
}

vm_poweroff() { # graceful ACPI power-off (slow under TCG: ~60 s), then as vm_shutdown
  vm_running || { _vm_log "VM not running"; rm -f "$ZW_VM_DIR/qemu.pid"; return 0; }
  local pid; pid=$(cat "$ZW_VM_DIR/qemu.pid")
  vm_qmp '{"execute":"system_powerdown"}' >/dev/null 2>&1
  for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  _vm_kill
  _vm_log "VM powered off"
}

_vm_main() {
  local c=${1:-}; shift || true
  case $c in
    boot) vm_boot ;;
    run) vm_run "$@" ;;
    spawn) vm_spawn "$@" ;;
    wait) vm_wait "$@" ;;
    peek) vm_peek "$@" ;;
    stop) vm_stop "$@" ;;
    qmp) vm_qmp "$@" ;;
    disks) vm_disks ;;
    shutdown) vm_shutdown ;;
    poweroff) vm_poweroff ;;
    kill) _vm_kill ;;
    status) if vm_running; then echo "running pid $(cat "$ZW_VM_DIR/qemu.pid") accel $(cat "$ZW_VM_DIR/accel" 2>/dev/null) image $(cat "$ZW_VM_DIR/image")"; else echo stopped; return 1; fi ;;
    *) sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return 2 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then _vm_main "$@"; exit $?; fi
