#!/usr/bin/env bash
# test-deb.sh — the zwatch package in a throw-away Debian bookworm root (root
# only; .ci/run runs it after `make deb`):
#
#   packaging/test-deb.sh [dist/zwatch_VERSION_amd64.deb]
#
# Makes (once; cached in /var/cache/zwatch-deb-test) a minimal bookworm root
# with mmdebstrap, unpacks a fresh copy and, in a chroot: installs the package
# as the README says (apt install ./zwatch_*.deb), checks its files, modes,
# the enabled unit, `zwatch version`, every man page through man and the
# completions; installs it again; configures a channel and upgrades to a
# higher version built here (the edited conffile and the state stay); removes
# it (config and state stay), installs it again, purges it (both go, and
# nothing of it is left), and installs it once more after the purge. The
# arm64 and armhf packages beside it are checked for their architecture.
# systemd does not run in a chroot: tests/e2e's `deb` scenario starts the
# unit in the QEMU guest.
#
# Environment: GO (as build-deb.sh), ZW_DEB_TEST_ARCHES (the packages that
# must be beside the .deb, default "amd64 arm64 armhf"), ZW_DEB_TEST_CACHE (default
# /var/cache/zwatch-deb-test), ZW_DEB_TEST_MIRROR (default: the system's
# Debian mirror, else deb.debian.org).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[test-deb %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { echo "test-deb.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (chroot)"
for tool in mmdebstrap dpkg-deb; do command -v $tool >/dev/null || die "$tool is missing: apt-get install mmdebstrap"; done

DEB=${1:-$(find dist -maxdepth 1 -name 'zwatch_*_amd64.deb' -printf '%T@ %p\n' 2>/dev/null | sort -rn | head -1 | cut -d' ' -f2-)}
[ -f "$DEB" ] || die "no dist/zwatch_*_amd64.deb: run make deb first (or name the .deb)"
V1=$(dpkg-deb -f "$DEB" Version)
V2=$V1+upgrade
CACHE=${ZW_DEB_TEST_CACHE:-/var/cache/zwatch-deb-test}
RECIPE=r1   # bump when the root's recipe below changes
BASE=$CACHE/bookworm-minbase-$RECIPE.tar
T0=$(date +%s)

n_pass=0 n_fail=0
ok() { n_pass=$((n_pass + 1)); say "PASS $1"; }
bad() { n_fail=$((n_fail + 1)); say "FAIL $1${2:+: $2}"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# step WHAT CMD...: PASS if CMD succeeds; its output is left in $out
step() { local what=$1; shift; if out=$("$@" 2>&1); then ok "$what"; else bad "$what" "$out"; fi; }

# ------------------------------------------------------------------ the root
detect_mirror() {
  grep -hoE 'https?://[^ ]+' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -E '/debian/?$' | head -1 || true
}
if [ ! -f "$BASE" ]; then
  MIRROR=${ZW_DEB_TEST_MIRROR:-$(detect_mirror)}; MIRROR=${MIRROR:-http://deb.debian.org/debian}
  say "making the bookworm root ($MIRROR; once, cached as $BASE)"
  mkdir -p "$CACHE"
  # man-db and groff-base read the pages; the package lists stay so that apt
  # can resolve the package's Recommends.
  # (mmdebstrap tells a tarball by the name's .tar)
  mmdebstrap --variant=minbase --include=man-db,groff-base --skip=cleanup/apt/lists \
    bookworm "$CACHE/partial.tar" "deb $MIRROR bookworm main" >"$CACHE/mmdebstrap.log" 2>&1 ||
    { tail -30 "$CACHE/mmdebstrap.log" >&2; die "mmdebstrap failed"; }
  mv "$CACHE/partial.tar" "$BASE"
fi
ROOT=$(mktemp -d /var/tmp/zwatch-deb-test.XXXXXX)
WORK=$(mktemp -d /var/tmp/zwatch-deb-build.XXXXXX)
trap 'rm -rf "$ROOT" "$WORK"' EXIT
tar -C "$ROOT" -xf "$BASE"

# A higher version of the same tree, for the upgrade.
say "building $V2 (amd64) for the upgrade"
DEB_VERSION=$V2 DEB_ARCHES=amd64 DEB_OUT=$WORK packaging/build-deb.sh 2>"$WORK/build.log" ||
  { tail -20 "$WORK/build.log" >&2; die "building $V2 failed"; }
cp "$DEB" "$ROOT/tmp/zwatch_${V1}_amd64.deb"
cp "$WORK/zwatch_${V2}_amd64.deb" "$ROOT/tmp/"

# c CMD...: run in the root, with a clean environment
c() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@" </dev/null; }
# files: what the root holds outside dpkg's and apt's own records and logs
files() { c find / -xdev \( -path /proc -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /tmp -o -path /var/lib/apt \) -prune -o -print | sort; }
mode() { c stat -c '%a %U:%G' "$1" 2>/dev/null; }
has() { c test -e "$1"; }
hasnt() { ! c test -e "$1"; }
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
status() { c dpkg-query -W -f '${db:Status-Abbrev}' zwatch 2>/dev/null | tr -d ' '; }
conffile_has() { c grep -q "$1" /etc/zwatch/zwatch.yaml; }
UNIT_LINK=/etc/systemd/system/multi-user.target.wants/zwatch.service
HINT="zwatch: add a notification channel to /etc/zwatch/zwatch.yaml"
before=$(files)

# ------------------------------------------------------------------ install (the README's way)
out=$(c apt-get install -s "/tmp/zwatch_${V1}_amd64.deb" 2>&1)
check "apt resolves the Recommends (smartmontools is offered; zfsutils-linux is in contrib, not required)" \
  grep -q '^Inst smartmontools ' <<<"$out"
step "apt install ./zwatch_${V1}_amd64.deb" c apt-get install -y --no-install-recommends "/tmp/zwatch_${V1}_amd64.deb"
check "postinst says how to configure and start it (no channel yet)" grep -qF "$HINT" <<<"$out"
check "status: installed" test "$(status)" = ii
check "zwatch version says $V1" c sh -c "zwatch version | grep -qF 'zwatch $V1 '"
check "/usr/bin/zwatch 755 root:root" test "$(mode /usr/bin/zwatch)" = "755 root:root"
check "/etc/zwatch/zwatch.yaml is a conffile" c sh -c "dpkg-query -W -f '\${Conffiles}' zwatch | grep -q '^ /etc/zwatch/zwatch.yaml '"
check "/etc/zwatch/zwatch.yaml 600 root:root" test "$(mode /etc/zwatch/zwatch.yaml)" = "600 root:root"
check "/var/lib/zwatch 700 root:root" test "$(mode /var/lib/zwatch)" = "700 root:root"
check "the config passes check-config, with no warning" c sh -c 'zwatch check-config /etc/zwatch/zwatch.yaml 2>&1 >/dev/null | grep -c . | grep -qx 0'
unit=$(c cat /usr/lib/systemd/system/zwatch.service 2>/dev/null || true)
for line in Type=notify WatchdogSec=120s "ExecStart=/usr/bin/zwatch run --config /etc/zwatch/zwatch.yaml" \
    ConditionPathExists=/etc/zwatch/zwatch.yaml ProtectSystem=strict NoNewPrivileges=true StateDirectoryMode=0700 \
    Environment=GODEBUG=disablethp=1; do
  check "unit: $line" grep -qxF "$line" <<<"$unit"
done
check "unit enabled without a running systemd (deb-systemd-helper)" c sh -c "readlink $UNIT_LINK | grep -q '/systemd/system/zwatch.service\$'"
check "dpkg --verify: files as packaged" test -z "$(c dpkg --verify zwatch 2>&1)"
for f in /usr/share/bash-completion/completions/zwatch /usr/share/zsh/vendor-completions/_zwatch \
    /usr/share/fish/vendor_completions.d/zwatch.fish /usr/share/doc/zwatch/copyright /usr/share/doc/zwatch/changelog.gz; do
  check "$f" has "$f"
done
pages=$(c sh -c 'ls /usr/share/man/man1/zwatch*.1.gz /usr/share/man/man5/zwatch.yaml.5.gz')
n_pages=$(wc -l <<<"$pages")
check "man pages: zwatch.yaml(5) and $n_pages in all (one per command)" test "$n_pages" -ge 20
warned=""
for p in $pages; do
  w=$(c env MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$p" 2>&1 >/dev/null) || w="man failed $w"
  [ -z "$w" ] || warned="$warned $p: $w"
done
check "man --warnings -l: every page formats without a warning" test -z "$warned"
[ -z "$warned" ] || say "$warned"
check "man 5 zwatch.yaml finds the page and shows notify.channels" c sh -c 'MANWIDTH=80 man 5 zwatch.yaml | grep -q notify.channels'
check "man zwatch-notify-test finds the page" c sh -c 'man -w zwatch-notify-test | grep -q /usr/share/man/man1/zwatch-notify-test.1.gz'

# ------------------------------------------------------------------ install again (idempotent)
step "dpkg -i of the same version again" c dpkg -i "/tmp/zwatch_${V1}_amd64.deb"
check "still 600 / 700 after the second install" test "$(mode /etc/zwatch/zwatch.yaml) $(mode /var/lib/zwatch)" = "600 root:root 700 root:root"

# ------------------------------------------------------------------ configure, then upgrade
c sed -i 's|^  channels: \[\]$|  channels:\n    - {name: hook-test, type: webhook, url: "http://127.0.0.1:9/zwatch"}|' /etc/zwatch/zwatch.yaml
check "a channel added to the conffile passes check-config" c sh -c 'zwatch check-config /etc/zwatch/zwatch.yaml | grep -q "name: hook-test"'
c sh -c 'echo kept > /var/lib/zwatch/marker'
step "upgrade $V1 -> $V2 (dpkg -i, no prompt)" c dpkg -i "/tmp/zwatch_${V2}_amd64.deb"
check "zwatch version says $V2" c sh -c "zwatch version | grep -qF 'zwatch $V2 '"
check "upgrade keeps the edited conffile" conffile_has "name: hook-test"
check "upgrade keeps the state" c grep -qx kept /var/lib/zwatch/marker
check "no .dpkg-dist/.dpkg-new/.dpkg-old left" test -z "$(c find /etc/zwatch -name '*.dpkg-*')"
check "configured: postinst prints no hint" test "${out/"$HINT"/}" = "$out"
check "conffile still 600 after the upgrade" test "$(mode /etc/zwatch/zwatch.yaml)" = "600 root:root"

# ------------------------------------------------------------------ remove (config and state stay)
step "dpkg -r" c dpkg -r zwatch
check "status after remove: config files only" test "$(status)" = rc
check "remove: /usr/bin/zwatch gone" hasnt /usr/bin/zwatch
check "remove: unit gone" hasnt /usr/lib/systemd/system/zwatch.service
check "remove: man pages gone" hasnt /usr/share/man/man1/zwatch.1.gz
check "remove keeps the edited config" conffile_has "name: hook-test"
check "remove keeps the state" c grep -qx kept /var/lib/zwatch/marker
step "dpkg -r again (nothing to do)" c dpkg -r zwatch

# ------------------------------------------------------------------ install after remove
step "dpkg -i after remove" c dpkg -i "/tmp/zwatch_${V2}_amd64.deb"
check "the kept config is used again" conffile_has "name: hook-test"
check "the kept state is there again" c grep -qx kept /var/lib/zwatch/marker
check "unit enabled again" has "$UNIT_LINK"

# ------------------------------------------------------------------ purge (everything goes)
step "dpkg -P" c dpkg -P zwatch
check "purge: not installed" test "$(status)" = "un" -o -z "$(status)"
check "purge: /etc/zwatch gone" hasnt /etc/zwatch
check "purge: /var/lib/zwatch gone" hasnt /var/lib/zwatch
check "purge: enable link gone" hasnt "$UNIT_LINK"
after=$(files)
left=$(comm -13 <(echo "$before") <(echo "$after"))
check "purge: nothing of zwatch is left (every path as before install)" test -z "$left"
[ -z "$left" ] || say "left after purge: $left"
step "dpkg -P again (nothing to do)" c dpkg -P zwatch

# ------------------------------------------------------------------ install after purge
step "dpkg -i after purge" c dpkg -i "/tmp/zwatch_${V1}_amd64.deb"
check "a fresh conffile (no channel), 600" test "$(c grep -c hook-test /etc/zwatch/zwatch.yaml) $(mode /etc/zwatch/zwatch.yaml)" = "0 600 root:root"
check "a fresh /var/lib/zwatch (700, empty)" test "$(mode /var/lib/zwatch) $(c ls -A /var/lib/zwatch | wc -l)" = "700 root:root 0"
check "postinst hints again" grep -qF "$HINT" <<<"$out"
step "final purge" c dpkg -P zwatch
check "dpkg --audit: nothing half-installed" test -z "$(c dpkg --audit 2>&1)"

# ------------------------------------------------------------------ the other architectures
declare -A MACHINE=([amd64]="02 3e" [arm64]="02 b7" [armhf]="01 28")   # ELF class, e_machine
for arch in ${ZW_DEB_TEST_ARCHES:-amd64 arm64 armhf}; do
  deb=$(dirname "$DEB")/zwatch_${V1}_$arch.deb
  [ -f "$deb" ] || { bad "$deb is missing (make deb builds it)"; continue; }
  [ -n "${MACHINE[$arch]:-}" ] || { bad "$deb: no ELF machine known for $arch"; continue; }
  check "$(basename "$deb"): Architecture: $arch" test "$(dpkg-deb -f "$deb" Architecture)" = "$arch"
  dpkg-deb -x "$deb" "$WORK/$arch"
  elf=$(od -An -tx1 -N20 "$WORK/$arch/usr/bin/zwatch" | tr -s ' \n' ' ')
  check "$(basename "$deb"): an ELF binary for $arch" test "$(cut -d' ' -f6,20 <<<"$elf")" = "${MACHINE[$arch]}"
done

say "$n_pass passed, $n_fail failed in $(( $(date +%s) - T0 )) s"
echo "test-deb: $n_pass passed, $n_fail failed"
[ "$n_fail" = 0 ]
