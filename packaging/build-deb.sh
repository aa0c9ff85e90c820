#!/usr/bin/env bash
# build-deb.sh — the Debian packages of zwatch (`make deb`):
#   dist/zwatch_<version>_amd64.deb, _arm64.deb (Rock64, Raspberry Pi 3/4/5 on
#   a 64-bit OS) and _armhf.deb (Raspberry Pi OS 32-bit, ARMv7).
#
# Each holds the static binary (CGO_ENABLED=0, -trimpath, stripped), the
# systemd unit, /etc/zwatch/zwatch.yaml (the example config, a conffile of
# mode 600), zwatch(1) and a page per command, zwatch.yaml(5), and the bash,
# zsh and fish completions. nfpm (packaging/nfpm.yaml) writes the .deb; it is
# built with the Go toolchain, so building needs only Go, git and make.
#
# Environment:
#   GO              the go command (default: go on PATH, else /usr/local/go/bin/go)
#   DEB_VERSION     the Debian version (default: from git, see deb_version below)
#   DEB_ARCHES      which architectures (default: "amd64 arm64 armhf")
#   DEB_OUT         where the .deb files go (default: dist)
#   DEB_MAINTAINER  "Name <address>" (default: the author of the commit built)
#   SOURCE_DATE_EPOCH  the date of the pages and of the files in the package
#                   (default: the commit's date, so a rebuild gives the same files)
#   build-deb.sh --print-version   prints the version it would use and exits
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
NFPM=github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
say() { printf '[deb %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { echo "build-deb.sh: $*" >&2; exit 1; }

# deb_version maps `git describe` to a Debian version that grows with every
# commit: a tag v1.2.0 is 1.2.0 (v1.2.0-rc1: 1.2.0~rc1, before 1.2.0);
# N commits after it, 1.2.0+git20261202.041200.abc1234; with no tag,
# 0.0~git20261202.041200.abc1234 (commit date and time, UTC). A tree with
# uncommitted changes adds +dirty.
deb_version() {
  local when sha dirty="" tag base
  git rev-parse --git-dir >/dev/null 2>&1 || die "not a git checkout: set DEB_VERSION"
  when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d.%H%M%S)
  sha=$(git rev-parse --short=7 HEAD)
  git diff --quiet HEAD -- 2>/dev/null || dirty="+dirty"
  if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
    base=${tag#v}
    base=${base//-/\~}
    if [ "$(git rev-list --count "$tag"..HEAD)" = 0 ]; then
      echo "$base$dirty"
    else
      echo "$base+git$when.$sha$dirty"
    fi
  else
    echo "0.0~git$when.$sha$dirty"
  fi
}

VERSION=${DEB_VERSION:-$(deb_version)}
if [ "${1:-}" = --print-version ]; then echo "$VERSION"; exit 0; fi
[ $# -eq 0 ] || die "usage: build-deb.sh [--print-version] (settings through the environment: see the script's head)"
# Debian policy 5.6.12: upstream version of digits, letters and . + ~, starting with a digit;
# no hyphen, since this is a native package without a Debian revision.
[[ $VERSION =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "DEB_VERSION=$VERSION is not a Debian version (digits first, then letters, digits, '.', '+', '~')"
ARCHES=${DEB_ARCHES:-amd64 arm64 armhf}
OUT=${DEB_OUT:-dist}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
MAINTAINER=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
[[ $MAINTAINER =~ ^[^\<]+\ \<[^\>@]+@[^\>]+\>$ ]] || die "DEB_MAINTAINER='$MAINTAINER' is not 'Name <address>'"
command -v "$GO" >/dev/null 2>&1 || [ -x "$GO" ] || die "go not found (GO=$GO): Go 1.26 or newer builds zwatch"
command -v gzip >/dev/null 2>&1 || die "gzip not found"

mkdir -p "$OUT"
work=$(mktemp -d "$OUT/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
mkdir -p "$stage/man/man1" "$stage/man/man5" "$work/bin"

# The copyright file first: without a LICENSE there is nothing to build.
"$(dirname "$0")/copyright.sh" "$GO" > "$stage/copyright"

say "nfpm ($NFPM)"
GOBIN=$(cd "$work/bin" && pwd) CGO_ENABLED=0 "$GO" install "$NFPM"

LDFLAGS="-s -w -X github.com/zwatch/zwatch/daemon.Version=$VERSION"
build() { # ARCH OUTPUT
  local goarch=$1 goarm=""
  case $1 in
    amd64|arm64) ;;
    armhf) goarch=arm goarm=7 ;;
    *) die "architecture '$1' is not one of amd64, arm64, armhf" ;;
  esac
  say "zwatch $VERSION for $1"
  CGO_ENABLED=0 GOOS=linux GOARCH=$goarch GOARM=$goarm "$GO" build -trimpath -ldflags "$LDFLAGS" -o "$2" ./cmd/zwatch
}
for arch in $ARCHES; do
  build "$arch" "$work/$arch/zwatch"
done

# The pages and completions come from a binary this machine runs.
host=$("$GO" env GOHOSTARCH)
[ "$host" = arm ] && host=armhf
if [ -x "$work/$host/zwatch" ]; then hostbin=$work/$host/zwatch; else hostbin=$work/host/zwatch; build "$host" "$hostbin"; fi
"$hostbin" gen-docs --out "$work/docs" --example configs/zwatch.example.yaml
for f in "$work"/docs/man1/*.1 "$work"/docs/man5/*.5; do
  sect=$(basename "$(dirname "$f")") page=$(basename "$f")
  gzip -9n <"$f" >"$stage/man/$sect/$page.gz"
done
cp -r "$work/docs/completion" "$stage/completion"

# The unit as configs/zwatch.service has it, run from where the package puts zwatch.
sed -e '/^# systemd unit for zwatch\. Install:/d' -e '/^# then: systemctl daemon-reload/d' \
    -e '/^# The Debian package (make deb) installs this unit/d' \
    -e 's|^ExecStart=/usr/local/bin/zwatch |ExecStart=/usr/bin/zwatch |' configs/zwatch.service > "$stage/zwatch.service"
grep -q '^ExecStart=/usr/bin/zwatch run ' "$stage/zwatch.service" || die "configs/zwatch.service: no ExecStart=/usr/local/bin/zwatch run line to point at /usr/bin/zwatch"

# A native package's changelog: this build's entry, with the commits since
# the previous tag (at most 20).
{
  echo "zwatch ($VERSION) unstable; urgency=medium"
  echo
  range=HEAD
  if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD^ 2>/dev/null); then range="$tag..HEAD"; fi
  git log -20 --no-merges --format='%s' "$range" 2>/dev/null | awk '{
    n = split($0, w, " "); line = "  *"
    for (i = 1; i <= n; i++) {
      if (length(line) + 1 + length(w[i]) > 78 && line != "  *" && line != "   ") { print line; line = "   " }
      line = line " " w[i]
    }
    print line }' || true
  echo "  * Built from git commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)."
  echo
  echo " -- $MAINTAINER  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$stage/changelog.gz"

for arch in $ARCHES; do
  out=$OUT/zwatch_${VERSION}_$arch.deb
  say "$out"
  DEB_VERSION=$VERSION DEB_ARCH=$arch DEB_BIN=$work/$arch/zwatch DEB_STAGE=$stage DEB_MAINTAINER=$MAINTAINER \
    "$work/bin/nfpm" package --config packaging/nfpm.yaml --packager deb --target "$out" >&2
done
