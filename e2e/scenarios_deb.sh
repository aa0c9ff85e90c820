# scenarios_deb.sh — the Debian package under systemd in the guest (issue 18). Sourced by
# e2e/run.sh after scenarios.sh (whose helpers it uses: g, ok, bad, check, figure, vm_run, gnow, ms,
# sink). run.sh builds the amd64 package (packaging/build-deb.sh) into the share as
# bin/zwatch_amd64.deb, and runs this scenario last: the packaged zwatch runs beside the e2e's own
# (/usr/local/bin/zwatch, state /var/lib/zwatch-e2e, status page 127.0.0.1:8931) with its own
# state (/var/lib/zwatch, the package's), status page (127.0.0.1:8932) and host name (e2e-deb),
# and pages the same sink, after every other scenario has read the sink.
# shellcheck shell=bash

DEB_PORT=8932
DEB_HINT="zwatch: add a notification channel to /etc/zwatch/zwatch.yaml"

deb_config() {
  cat <<EOF
# written by e2e/scenarios_deb.sh
host: e2e-deb
http:
  listen: 127.0.0.1:$DEB_PORT
notify:
  channels:
    - name: sink
      type: webhook
      url: http://127.0.0.1:9099/zwatch
      min_severity: warning
EOF
}

# deb_get PATH: GET PATH from the packaged zwatch's status page (python, as web-get.py does)
deb_get() {
  vm_run "python3 -c 'import sys, urllib.request as u; sys.stdout.write(u.urlopen(\"http://127.0.0.1:$DEB_PORT$1\", timeout=15).read().decode())'"
}

# 18. install, start under systemd (Type=notify, watchdog, hardening), stop, purge
sc_deb() {
  local s=deb out t0 t1 show
  if [ ! -f "$E2E_SHARE/bin/zwatch_amd64.deb" ]; then bad $s "the amd64 package was built (see the build step's log above)"; return 1; fi
  # man-db's trigger rebuilds the whole man index on every dpkg run: about a minute under TCG
  # each time, which measures man-db, not the package (lintian and lexgrog check the pages).
  vm_run "rm -f /var/lib/man-db/auto-update" || true
  out=$(vm_run "dpkg -i $G/bin/zwatch_amd64.deb 2>&1") && ok $s "dpkg -i the package" || { bad $s "dpkg -i the package" "$(tail -3 <<<"$out")"; return 1; }
  grep -qF "$DEB_HINT" <<<"$out" && ok $s "postinst says how to configure it (example config: no channel)" || bad $s "postinst hint" "$out"
  out=$(vm_run "systemctl is-enabled zwatch"); [ "$out" = enabled ] && ok $s "systemctl is-enabled zwatch: enabled" || bad $s "zwatch.service enabled" "$out"
  out=$(vm_run "systemctl is-active zwatch"); [ "$out" = inactive ] && ok $s "not started before it is configured" || bad $s "not started before it is configured" "$out"

  # Configured: a channel. Installing again (dpkg's configure with the old version) starts it.
  deb_config > "$E2E_SHARE/deb-zwatch.yaml"
  g "install -m 600 $G/deb-zwatch.yaml /etc/zwatch/zwatch.yaml" || { bad $s "write /etc/zwatch/zwatch.yaml"; return 1; }
  t0=$(gnow)
  out=$(vm_run "dpkg -i $G/bin/zwatch_amd64.deb 2>&1") && ok $s "dpkg -i again, configured" || bad $s "dpkg -i again, configured" "$(tail -3 <<<"$out")"
  t1=$(gnow)
  grep -qF "$DEB_HINT" <<<"$out" && bad $s "configured: no hint" "$out" || ok $s "configured: no hint"
  out=$(vm_run "systemctl is-active zwatch")
  if [ "$out" = active ]; then
    ok $s "postinst started zwatch.service, which reported ready (Type=notify)"
    figure $s "dpkg -i (configured) until zwatch.service is ready" "$(ms "$t1" "$t0")" ms "guest clock; systemctl start waits for READY=1"
  else
    bad $s "postinst started zwatch.service" "$out; $(vm_run 'journalctl -u zwatch --no-pager -n 20' 2>&1)"
  fi
  show=$(vm_run "systemctl show -p Type -p WatchdogUSec -p NotifyAccess -p SubState -p ProtectSystem -p NoNewPrivileges zwatch")
  for want in Type=notify WatchdogUSec=2min NotifyAccess=main SubState=running ProtectSystem=strict NoNewPrivileges=yes; do
    grep -qxF "$want" <<<"$show" && ok $s "systemctl show: $want" || bad $s "systemctl show: $want" "$(tr '\n' ' ' <<<"$show")"
  done
  check $s "zwatch version is the package's (/usr/bin/zwatch)" vm_run "/usr/bin/zwatch version | grep -q '^zwatch [0-9]'"
  check $s "/var/lib/zwatch: 700, the embedded bus's store in it" vm_run "[ \$(stat -c %a /var/lib/zwatch) = 700 ] && [ -n \"\$(ls -A /var/lib/zwatch)\" ]"
  # Under the unit's hardening (ProtectSystem=strict, the capability bounding set, MemoryMax) it
  # reads the real pools: its own /metrics lists them (the first zpool poll follows the start).
  local end=$(( $(date +%s) + 60 ))
  until deb_get /metrics 2>/dev/null | grep -q '^zfs_pool_health{'; do
    (( $(date +%s) >= end )) && break
    sleep 2
  done
  if deb_get /metrics 2>/dev/null | grep -q '^zfs_pool_health{'; then
    ok $s "the packaged zwatch serves /metrics on 127.0.0.1:$DEB_PORT with the guest's pools (under the unit's hardening)"
  else
    bad $s "the packaged zwatch serves /metrics with the guest's pools" "$(vm_run 'journalctl -u zwatch --no-pager -n 20' 2>&1)"
  fi
  t0=$(gnow)
  check $s "zwatch notify test with the package's config reaches the sink" vm_run "/usr/bin/zwatch notify test --config /etc/zwatch/zwatch.yaml >/dev/null"
  check $s "the sink has the test notification" wait_note 20 --after "$t0" --alert ZpoolVdevFaulted
  has footprint && deb_footprint

  # Stop, and start again the way the postinst hint says.
  t0=$(gnow)
  g "systemctl stop zwatch" && ok $s "systemctl stop zwatch" || bad $s "systemctl stop zwatch"
  t1=$(gnow)
  figure $s "systemctl stop zwatch" "$(ms "$t1" "$t0")" ms "guest clock; TimeoutStopSec=30s"
  out=$(vm_run "systemctl is-active zwatch"); [ "$out" = inactive ] && ok $s "stopped: inactive" || bad $s "stopped: inactive" "$out"
  g "systemctl restart zwatch" && [ "$(vm_run 'systemctl is-active zwatch')" = active ] && ok $s "systemctl restart zwatch: active again" || bad $s "systemctl restart zwatch: active again"

  # Purge: prerm stops it, postrm drops the config and the state.
  t0=$(gnow)
  out=$(vm_run "dpkg --purge zwatch 2>&1") && ok $s "dpkg --purge zwatch" || bad $s "dpkg --purge zwatch" "$out"
  figure $s "dpkg --purge zwatch (stops the running service)" "$(ms "$(gnow)" "$t0")" ms "guest clock; TimeoutStopSec=30s"
  check $s "purged: no /usr/bin/zwatch process left" vm_run "! pgrep -f '^/usr/bin/zwatch run' >/dev/null"
  check $s "purged: /etc/zwatch and /var/lib/zwatch gone" vm_run "[ ! -e /etc/zwatch ] && [ ! -e /var/lib/zwatch ]"
  out=$(vm_run "systemctl show -p LoadState zwatch"); [ "$out" = LoadState=not-found ] && ok $s "purged: the unit is gone (LoadState=not-found)" || bad $s "purged: the unit is gone" "$out"
  check $s "the e2e's own zwatch still runs" vm_run "pgrep -f '^zwatch run --config $G/zwatch.yaml' >/dev/null"
}
