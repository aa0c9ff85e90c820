#!/bin/sh
# Installs what zwatch needs on Debian or Ubuntu: make, smartmontools and,
# where the system's sources offer it, zfsutils-linux. Uses sudo when not root.
set -eu
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
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
	echo "install-deps.sh: Go 1.26 or newer is needed to build zwatch and was not found." >&2
	exit 1
fi
