#!/usr/bin/env bash
# copyright.sh — writes the package's /usr/share/doc/zwatch/copyright (DEP-5,
# https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/) to
# stdout: zwatch's own LICENSE, the vendored uPlot, and every Go module and
# the Go standard library compiled into the static binary, each with the
# license file it ships. Run from the repository root by build-deb.sh.
#
#   copyright.sh GO
#
# It fails, naming the file, when a license text is not one it knows: a new
# dependency's license is then looked at by a person. Without a LICENSE at
# the root, zwatch's own paragraph says that no license was granted.
set -euo pipefail
GO=${1:?usage: copyright.sh GO}
die() { echo "copyright.sh: $*" >&2; exit 1; }

# short_name FILE: the DEP-5 short name of the license text in FILE
short_name() {
  local t
  t=$(tr -s ' \t\n' '   ' < "$1")
  case $t in
    *"two different licenses: MIT and Apache"*) echo "Expat and Apache-2.0" ;;
    *"Apache License"*"Version 2.0"*) echo Apache-2.0 ;;
    *"Eclipse Public License v2.0 and Eclipse Distribution License v1.0"*) echo "EPL-2.0 or EDL-1.0" ;;
    *"Mozilla Public License Version 2.0"*) echo MPL-2.0 ;;
    *"GNU GENERAL PUBLIC LICENSE"*"Version 3"*) echo GPL-3 ;;
    *"GNU GENERAL PUBLIC LICENSE"*"Version 2"*) echo GPL-2 ;;
    *"Permission is hereby granted, free of charge"*) echo Expat ;;
    *"Permission to use, copy, modify, and/or distribute"*) echo ISC ;;
    *"Redistribution and use in source and binary forms"*"Neither the name"*|*"Redistribution and use in source and binary forms"*"names of its contributors"*) echo BSD-3-Clause ;;
    *"Redistribution and use in source and binary forms"*) echo BSD-2-Clause ;;
    *) return 1 ;;
  esac
}

# holders FILE: the copyright lines of FILE (not the license's own
# boilerplate, such as Apache's "Copyright [yyyy] [name of copyright owner]"),
# each as a continuation line
holders() {
  grep -E '^[[:space:]>]*(Copyright|©)' "$1" | grep -vE '\[yyyy\]|\{yyyy\}|Copyright (notice|owner|holder|license|and license)' |
    sed -E 's/^[[:space:]>]*//; s/^Copyright[[:space:]]*(\([cC]\)|©)?[[:space:]]*//; s/^/ /' | sort -u || true
}

# body FILE: FILE as DEP-5 continuation lines (an empty line is " "),
# without its leading and trailing empty lines
body() {
  awk '{ sub(/[ \t\r]+$/, ""); lines[NR] = $0 }
    END { s = 1; while (s <= NR && lines[s] == "") s++; e = NR; while (e >= s && lines[e] == "") e--
          for (i = s; i <= e; i++) print (lines[i] == "" ? " ." : " " lines[i]) }' "$1"
}

# stanza PATTERN FILE WHAT COMMENT: a Files paragraph for WHAT, whose license
# is the text in FILE; a NOTICE file beside it (Apache-2.0) goes into Comment
stanza() {
  local pattern=$1 file=$2 what=$3 comment=$4 name who notice
  name=$(short_name "$file") || die "$file: not a license text this script knows (Apache-2.0, Expat, BSD, ISC, MPL-2.0, GPL, EPL-2.0/EDL-1.0): name it in short_name"
  who=$(holders "$file")
  [ -n "$who" ] || who=" the authors of $what"
  echo
  echo "Files: $pattern"
  printf 'Copyright:%s\n' "$who"
  echo "License: $name"
  case $name in
    Apache-2.0|MPL-2.0|GPL-2|GPL-3)
      echo " On Debian systems the full text of the $name license is in"
      echo " /usr/share/common-licenses/$name."
      ;;
    *) body "$file" ;;
  esac
  echo "Comment: $comment"
  notice=$(find "$(dirname "$file")" -maxdepth 1 -type f \( -name NOTICE -o -name NOTICE.md -o -name NOTICE.txt \) | sort | head -1)
  if [ -n "$notice" ]; then
    echo " ."
    echo " Its NOTICE file:"
    body "$notice"
  fi
}


cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: zwatch
Source: https://github.com/zwatch/zwatch
EOF
if [ -f LICENSE ]; then
  stanza "*" LICENSE zwatch "zwatch itself"
else
  # No license has been chosen for zwatch itself yet: say so rather than
  # name one nobody granted. The day LICENSE exists, its text goes here.
  cat <<EOF

Files: *
Copyright: the authors of zwatch
License: all-rights-reserved
 zwatch's authors have not published it under a license (the source has no
 LICENSE file): all rights are reserved.
Comment: zwatch itself
EOF
fi
stanza "views/web/static/vendor/uplot/*" views/web/static/vendor/uplot/LICENSE uPlot "uPlot, which the status page serves (embedded in /usr/bin/zwatch)"
while read -r path version dir; do
  lic=$(find "$dir" -maxdepth 1 -type f \( -iname 'LICEN[CS]E*' -o -iname 'COPYING*' \) | sort | head -1)
  [ -n "$lic" ] || die "module $path $version has no LICENSE or COPYING file in $dir"
  stanza "vendor/$path/*" "$lic" "$path" "Go module $path $version, compiled into /usr/bin/zwatch"
done < <("$GO" list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/zwatch | sort -u)
stanza "go/*" "$("$GO" env GOROOT)/LICENSE" Go "the Go standard library and runtime ($("$GO" env GOVERSION)), compiled into /usr/bin/zwatch"
