#!/usr/bin/env bash
# build-image.sh — build (or reuse) a cached Debian bookworm VM image with a
# real OpenZFS kernel module and userland, for the zwatch e2e harness.
#
# Usage:  ZFS_VERSION=2.3.2 e2e/build-image.sh        (default 2.3.2)
#         ZFS_VERSION=2.1.11 e2e/build-image.sh
# Prints the image directory on stdout (last line). Everything else -> stderr.
#
# Cache layout: $ZW_E2E_CACHE (default /var/cache/zwatch-e2e)/
#   apt/            private apt sources/lists (the system's sources are never touched)
#   <key>/          key = k<kernel-abi>-zfs<zfs-pkg-version>-r<recipe>
#     vmlinuz initrd.img root.img  env  (the finished image; "env" is written last)
#
# Idempotent: if <key>/env exists the image is reused and nothing is rebuilt.
# Set ZW_E2E_REBUILD=1 to force a rebuild of the key.
set -euo pipefail

ZFS_VERSION=${ZFS_VERSION:-2.3.2}
CACHE=${ZW_E2E_CACHE:-/var/cache/zwatch-e2e}
RECIPE=2            # bump when the guest recipe below changes
ROOT_UUID=7a776174-6368-4532-8565-000000000001
HOSTID=5a776174     # stable hostid => stable `zpool status`/events output
JOBS=${JOBS:-$(nproc)}

log() { printf '[build-image %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root"

case "$ZFS_VERSION" in
  2.3.*) ZFS_SUITE=bookworm-backports ;;
  2.1.*) ZFS_SUITE=bookworm ;;
  *) die "unsupported ZFS_VERSION=$ZFS_VERSION (2.3.2 or 2.1.11)" ;;
esac

# ---------------------------------------------------------------- apt setup
# Reuse exactly the mirror host the system is configured with; add contrib and
# bookworm-backports through a private sources file.
detect_mirror() {
  local want=$1 u
  u=$(grep -hoE 'https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -E "/${want}/?\$" | head -1 || true)
  echo "${u%/}"
}
MIRROR=$(detect_mirror debian); MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECMIRROR=$(detect_mirror debian-security); SECMIRROR=${SECMIRROR:-http://deb.debian.org/debian-security}
APTDIR=$CACHE/apt
mkdir -p "$APTDIR/lists/partial" "$APTDIR/archives/partial"
cat > "$APTDIR/sources.list.new" <<EOF
deb $MIRROR bookworm main contrib
deb $MIRROR bookworm-updates main contrib
deb $MIRROR bookworm-backports main contrib
deb $SECMIRROR bookworm-security main contrib
EOF
mv "$APTDIR/sources.list.new" "$APTDIR/sources.list"
APT_OPTS=(-o "Dir::Etc::sourcelist=$APTDIR/sources.list" -o Dir::Etc::sourceparts=/dev/null
          -o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache::archives=$APTDIR/archives"
          -o APT::Sandbox::User=root)
apt_q() { apt-cache "${APT_OPTS[@]}" "$@"; }
# refresh private lists if missing or older than a day
if [ -z "$(find "$APTDIR/updated.stamp" -mmin -1440 2>/dev/null)" ] || ! cmp -s "$APTDIR/sources.list" "$APTDIR/updated.stamp"; then
  log "apt-get update (private lists in $APTDIR/lists)"
  apt-get "${APT_OPTS[@]}" update -q >&2
  cp "$APTDIR/sources.list" "$APTDIR/updated.stamp"
fi

KPKG=$(apt_q depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$KPKG" ] || die "cannot resolve linux-image-amd64"
KVER=${KPKG#linux-image-}
ZFS_PKGVER=$(apt_q madison zfs-dkms | awk -v v="$ZFS_VERSION" -v s="$ZFS_SUITE" \
  '$3 ~ "^"v"-" && $0 ~ s"/contrib" {print $3; exit}')
[ -n "$ZFS_PKGVER" ] || die "zfs-dkms $ZFS_VERSION not found in $ZFS_SUITE"
KEY="k${KVER}-zfs${ZFS_PKGVER//[~+]/_}-r${RECIPE}"
OUT=$CACHE/$KEY
log "kernel $KVER, zfs $ZFS_PKGVER ($ZFS_SUITE), key $KEY"

if [ -f "$OUT/env" ] && [ -z "${ZW_E2E_REBUILD:-}" ]; then
  log "reusing cached image $OUT"
  echo "$OUT"; exit 0
fi
T0=$(date +%s)
mkdir -p "$OUT"; rm -f "$OUT/env"

# --------------------------------------------------------- host packages
need=()
for p in qemu-system-x86 qemu-utils mmdebstrap e2fsprogs build-essential autoconf automake \
         libtool pkg-config dpkg-dev python3 jq "linux-headers-$KVER"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing host packages: ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -q --no-install-recommends "${need[@]}" >&2
fi

# --------------------------------------------------------- zfs kernel module (host build)
build_modules() {
  local src=$OUT/build/zfs-src
  if [ -f "$OUT/build/modules.stamp" ]; then log "zfs modules already built"; return; fi
  rm -rf "$OUT/build"; mkdir -p "$OUT/build/dl" "$OUT/build/ko"
  ( cd "$OUT/build/dl" && apt-get "${APT_OPTS[@]}" download -q "zfs-dkms=$ZFS_PKGVER" >&2 )
  dpkg-deb -x "$OUT"/build/dl/zfs-dkms_*.deb "$OUT/build/x"
  mv "$OUT"/build/x/usr/src/zfs-* "$src"
  log "configure zfs $ZFS_PKGVER against $KVER headers"
  ( cd "$src" && ./configure --disable-dependency-tracking --prefix=/usr --with-config=kernel \
      --with-linux="/usr/src/linux-headers-${KVER%-amd64}-common" \
      --with-linux-obj="/usr/src/linux-headers-$KVER" ) > "$OUT/build/configure.log" 2>&1 \
    || { tail -30 "$OUT/build/configure.log" >&2; die "zfs configure failed"; }
  log "make -j$JOBS (zfs kernel modules; ~4 min)"
  ( cd "$src" && make -j"$JOBS" ) > "$OUT/build/make.log" 2>&1 \
    || { tail -30 "$OUT/build/make.log" >&2; die "zfs make failed"; }
  find "$src/module" -name '*.ko' -exec cp {} "$OUT/build/ko/" \;
  [ -f "$OUT/build/ko/zfs.ko" ] || die "zfs.ko not produced"
  touch "$OUT/build/modules.stamp"
  log "modules: $(ls "$OUT/build/ko" | tr '\n' ' ')"
}

# --------------------------------------------------------- guest rootfs
build_rootfs() {
  local r=$OUT/rootfs
  if [ -f "$OUT/rootfs.stamp" ]; then log "rootfs already bootstrapped"; return; fi
  rm -rf "$r" "$OUT/dummy"; mkdir -p "$OUT/dummy/pkg/DEBIAN"
  # An empty package providing zfs-modules, so zfs-zed doesn't pull in zfs-dkms;
  # the real modules are copied in after the host build.
  cat > "$OUT/dummy/pkg/DEBIAN/control" <<EOF
Package: zwatch-zfs-modules
Version: $ZFS_VERSION
Architecture: all
Maintainer: zwatch e2e <root@localhost>
Provides: zfs-modules (= $ZFS_PKGVER)
Description: placeholder: OpenZFS modules built by zwatch e2e/build-image.sh
EOF
  dpkg-deb --build "$OUT/dummy/pkg" "$OUT/dummy/zwatch-zfs-modules.deb" >&2
  cat > "$OUT/dummy/zfs.pref" <<EOF
Package: zfsutils-linux zfs-zed zfs-dkms libzfs* libzpool* libnvpair* libuutil* python3-pyzfs
Pin: version $ZFS_PKGVER
Pin-Priority: 1001
EOF
  # A small initrd: only what mounts the root disk (virtio-blk, ext4) instead of "most" modules
  # (36 MB, which the emulated CPU unpacks at every boot). Run as a hook so /proc and /sys exist.
  local INITRD_HOOK='printf "MODULES=list\n" > "$1/etc/initramfs-tools/conf.d/zwatch-e2e" && printf "%s\n" virtio_pci virtio_blk ext4 crc32c_generic >> "$1/etc/initramfs-tools/modules" && chroot "$1" update-initramfs -u -k all'
  log "mmdebstrap guest rootfs (bookworm + zfs $ZFS_PKGVER)"
  mmdebstrap --variant=minbase --components=main,contrib --architectures=amd64 \
    --aptopt='APT::Install-Recommends "false"' \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --setup-hook="mkdir -p \"\$1/etc/apt/preferences.d\" && cp '$OUT/dummy/zfs.pref' \"\$1/etc/apt/preferences.d/zfs.pref\"" \
    --include="systemd,systemd-sysv,udev,kmod,util-linux,procps,initramfs-tools,$KPKG" \
    --include="zfsutils-linux,zfs-zed,smartmontools,nvme-cli,lsscsi,e2fsprogs,less,psmisc" \
    --include="$OUT/dummy/zwatch-zfs-modules.deb" \
    --customize-hook="$INITRD_HOOK" \
    bookworm "$r" \
    "deb $MIRROR bookworm main contrib" "deb $MIRROR bookworm-updates main contrib" \
    "deb $MIRROR bookworm-backports main contrib" "deb $SECMIRROR bookworm-security main contrib" \
    > "$OUT/mmdebstrap.log" 2>&1 || { tail -40 "$OUT/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
  touch "$OUT/rootfs.stamp"
}

if [ -n "${ZW_SERIAL_BUILD:-}" ]; then
  build_modules; build_rootfs
else
  build_rootfs & rpid=$!
  build_modules
  wait $rpid || die "rootfs build failed"
fi

# --------------------------------------------------------- guest configuration
r=$OUT/rootfs
log "configuring guest"
mkdir -p "$r/lib/modules/$KVER/extra"
# Without their debug info (94 MB -> a few MB for zfs.ko): loading the module is part of every
# boot, and under TCG the loader's read of a 94 MB file took 5-20 s.
for ko in "$OUT"/build/ko/*.ko; do
  strip --strip-debug -o "$r/lib/modules/$KVER/extra/$(basename "$ko")" "$ko"
done
chroot "$r" depmod -a "$KVER"
chroot "$r" modinfo -k "$KVER" -F version zfs >&2
echo zwatch-e2e > "$r/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tzwatch-e2e\n' > "$r/etc/hosts"
chroot "$r" passwd -d root >/dev/null
printf 'UUID=%s / ext4 rw,errors=remount-ro 0 1\n' "$ROOT_UUID" > "$r/etc/fstab"
rm -f "$r/etc/hostid"; chroot "$r" zgenhostid "$HOSTID"
# autologin on the serial console (debugging only; the harness uses the agent)
mkdir -p "$r/etc/systemd/system/serial-getty@ttyS0.service.d"
cat > "$r/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 %I $TERM
EOF
# quiet, fast boot: no timers/daemons that don't matter for the scenarios
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service \
         fstrim.timer smartmontools.service smartd.service systemd-timesyncd.service \
         zfs-scrub-monthly@.timer zfs-trim-monthly@.timer; do
  ln -sf /dev/null "$r/etc/systemd/system/$u"
done
# guest agent: runs scripts dropped into the 9p share (see e2e/vm.sh)
install -m 0755 /dev/stdin "$r/usr/local/sbin/zw-agent" <<'EOF'
#!/bin/bash
# zwatch e2e guest agent. Protocol (all files in /mnt/host/q):
#   host writes ID.sh (atomically, via rename)   -> agent renames it to ID.run and
#   runs it in the background: stdout -> ID.out, stderr -> ID.err, pid -> ID.pid,
#   exit status -> ID.rc (written last, atomically).
S=/mnt/host
mkdir -p $S
mountpoint -q $S || mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host $S || exit 1
Q=$S/q; mkdir -p $Q
modprobe zfs
udevadm settle -t 30
{ echo "kernel $(uname -r)"; echo "uptime $(cut -d' ' -f1 /proc/uptime)"; cat /sys/module/zfs/version 2>/dev/null; } > $S/ready.tmp
mv $S/ready.tmp $S/ready
echo "zw-agent: ready" > /dev/ttyS0
cd /root
while :; do
  for f in $Q/*.sh; do
    [ -e "$f" ] || continue
    id=${f%.sh}
    mv "$f" "$id.run" || continue
    (
      bash "$id.run" >"$id.out" 2>"$id.err" </dev/null &
      echo $! > "$id.pid"
      wait $!
      echo $? > "$id.rc.tmp"; mv "$id.rc.tmp" "$id.rc"
    ) &
  done
  sleep 0.1
done
EOF
cat > "$r/etc/systemd/system/zw-agent.service" <<'EOF'
[Unit]
Description=zwatch e2e guest agent (9p command runner)
After=systemd-udevd.service local-fs.target
Wants=systemd-udevd.service
[Service]
ExecStart=/usr/local/sbin/zw-agent
Restart=always
RestartSec=1
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/zw-agent.service "$r/etc/systemd/system/multi-user.target.wants/zw-agent.service"
# kernel + initrd for direct boot
cp "$r/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
cp "$r/boot/initrd.img-$KVER" "$OUT/initrd.img"
ZFS_USER=$(chroot "$r" dpkg-query -W -f='${Version}' zfsutils-linux)

log "mke2fs root image"
size_mb=$(( $(du -sm "$r" | cut -f1) + 768 ))
rm -f "$OUT/root.img.tmp"
mke2fs -q -F -t ext4 -L zwroot -U "$ROOT_UUID" -d "$r" "$OUT/root.img.tmp" "${size_mb}M" >&2
mv "$OUT/root.img.tmp" "$OUT/root.img"

cat > "$OUT/env.tmp" <<EOF
KVER=$KVER
ZFS_VERSION=$ZFS_VERSION
ZFS_PKGVER=$ZFS_PKGVER
ZFS_USERLAND=$ZFS_USER
ROOT_UUID=$ROOT_UUID
BUILD_SECONDS=$(( $(date +%s) - T0 ))
BUILT_AT=$(date -u +%FT%TZ)
EOF
mv "$OUT/env.tmp" "$OUT/env"
# the unpacked rootfs and the build tree are not needed to boot
[ -n "${ZW_E2E_KEEP_BUILD:-}" ] || rm -rf "$OUT/rootfs" "$OUT/rootfs.stamp" "$OUT/build/zfs-src" "$OUT/build/x"
log "image ready in $(( $(date +%s) - T0 ))s: $OUT"
echo "$OUT"
