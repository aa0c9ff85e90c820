#!/bin/sh
# Installs what zwatch needs on Debian or Ubuntu: make, smartmontools and,
# where the system's sources offer it, zfsutils-linux. Uses sudo when not root.
# With --test, also what the tests run for real: Chromium (the status page is
# opened in headless Chromium), promtool (package prometheus, which checks
# the /metrics output), mosquitto (the MQTT channel's tests start their own
# broker), man-db and groff-base (the man pages are formatted with man
# --warnings and lexgrog), lintian and mmdebstrap (the Debian package is
# linted, and installed in a throw-away Debian root).
set -eu
TEST=0
case "${1:-}" in
--test) TEST=1 ;;
"") ;;
*) echo "usage: install-deps.sh [--test]" >&2; exit 2 ;;
esac
SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-deps.sh: run as root" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q make smartmontools ca-certificates
if apt-cache policy zfsutils-linux 2>/dev/null | grep -q 'Candidate: [0-9]'; then
	$SUDO apt-get install -y -q --no-install-recommends zfsutils-linux
else
	echo "install-deps.sh: zfsutils-linux is not in your apt sources (on Debian enable the 'contrib' component);" >&2
	echo "  zwatch will run and say that ZFS monitoring is disabled." >&2
fi
if [ "$TEST" = 1 ]; then
	had_prometheus=0
	dpkg -s prometheus >/dev/null 2>&1 && had_prometheus=1
	had_mosquitto=0
	dpkg -s mosquitto >/dev/null 2>&1 && had_mosquitto=1
	$SUDO apt-get install -y -q --no-install-recommends chromium prometheus mosquitto ||
		$SUDO apt-get install -y -q --no-install-recommends chromium-browser prometheus mosquitto
	$SUDO apt-get install -y -q man-db groff-base lintian mmdebstrap
	# Only promtool and the mosquitto binary are used: servers this script
	# installed are not left running (the tests start their own broker).
	if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
		[ "$had_prometheus" = 1 ] || $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
		[ "$had_mosquitto" = 1 ] || $SUDO systemctl disable --now mosquitto >/dev/null 2>&1 || true
	fi
fi
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps.sh: Go 1.26 or newer is needed to build zwatch and was not found." >&2
	exit 1
fi
