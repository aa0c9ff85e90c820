# scenarios_web.sh — the status page, its JSON API and /metrics on real pools (issue 17). Sourced
# by e2e/run.sh after scenarios.sh (whose helpers it uses: g, ok, bad, figure, vm_run, gnow, ms).
# zwatch serves them on its default listener, 127.0.0.1:8931 in the guest; e2e/web-get.py fetches.
# shellcheck shell=bash

WEB_GET="python3 $G/web-get.py"
web_share() { cp -f "$ZW_E2E_REPO/e2e/web-get.py" "$E2E_SHARE/web-get.py"; }

# web_vdev_offline VDEV: the API shows leaf VDEV of vault OFFLINE and highlighted, with its by-id name
web_vdev_offline() {
  vm_run "$WEB_GET '/api/host?host=e2e'" 2>/dev/null | jq -e --arg v "$1" '.pools[] | select(.name == "vault") | .vdevs[]
    | select((.path // "") | contains($v)) | select(.state == "OFFLINE" and .problem == true)' >/dev/null 2>&1
}

# web_offline T0: called by sc_offline while $V_VD1 is offline (T0: guest ns right before zpool
# offline). The page, the API and /metrics must all tell it.
web_offline() {
  local s=offline t0=$1 end tw
  web_share
  end=$(( $(date +%s) + 20 ))
  until web_vdev_offline "$V_VD1"; do
    (( $(date +%s) >= end )) && { bad $s "status API shows $V_VD1 OFFLINE and highlighted" "not within 20 s"; return 1; }
    sleep 0.5
  done
  tw=$(gnow)
  ok $s "status API shows $V_VD1 OFFLINE and highlighted" "$(ms "$tw" "$t0") ms after zpool offline"
  figure $s "zpool offline started -> status API shows the vdev OFFLINE" "$(ms "$tw" "$t0")" ms "guest clock: the first poll of the API that saw it; each poll is a guest job and a GET (1-3 s under TCG), so mostly the harness's own time, not the page's"
  check $s "page names $V_VD1 and OFFLINE" vm_run "$WEB_GET / | grep -q '$V_VD1' && $WEB_GET / | grep -q OFFLINE"
  check $s "/metrics: zfs_pool_health of vault is 1 (DEGRADED)" vm_run "$WEB_GET /metrics | grep -Eq '^zfs_pool_health\\{[^}]*pool=\"vault\"[^}]*\\} 1\$'"
  check $s "/metrics: zwatch_vdev_health of $V_VD1 is 3 (OFFLINE)" vm_run "$WEB_GET /metrics | grep -E '^zwatch_vdev_health\\{' | grep '$V_VD1' | grep -Eq '\\} 3\$'"
}

# 17. the page, the API and /metrics against every real pool, and what they cost
sc_web() {
  local s=web pools p st r
  web_share
  pools=$(vm_run "zpool list -H -o name,health") || { bad $s "zpool list"; return 1; }
  local n=0
  while read -r p st; do
    [ -z "$p" ] && continue
    n=$((n + 1))
    r=$(vm_run "$WEB_GET '/api/host?host=e2e'" | jq -r --arg p "$p" '.pools[] | select(.name == $p) | .state')
    [ "$r" = "$st" ] && ok $s "API: pool $p $st as zpool list says" || bad $s "API: pool $p $st as zpool list says" "API says '$r'"
    check $s "/metrics: zfs_pool_health of $p" vm_run "$WEB_GET /metrics | grep -Eq '^zfs_pool_health\\{[^}]*pool=\"$p\"'"
  done <<<"$pools"
  web_json() { vm_run "$WEB_GET '$1'" | jq -e "$2" >/dev/null; }
  check $s "API: the disks with SMART readings, joined to their pools" web_json '/api/host?host=e2e' '[.disks[] | select(.smart_at != null and .pool != null and .pool != "")] | length > 0' 
  check $s "/metrics: smartctl_device_smart_status of the guest's disks" vm_run "$WEB_GET /metrics | grep -q '^smartctl_device_smart_status{'"
  # a raw point per pool each history.raw_interval (1m in the guest config): at most a minute after
  # provision made vault, whose first minute may have passed before its first capacity fact
  local end=$(( $(date +%s) + 75 ))
  until web_json '/api/history?host=e2e&source=pool/vault&range=1d' '(.t | length > 0) and (.series.capacity_percent != null)'; do
    (( $(date +%s) >= end )) && break
    sleep 5
  done
  check $s "history: vault has capacity points" web_json '/api/history?host=e2e&source=pool/vault&range=1d' '(.t | length > 0) and (.series.capacity_percent != null)' 
  local t
  t=$(vm_run "$WEB_GET --time 10 /") && figure $s "GET / (the status page), $n real pools: median, max of 10" "${t// /, }" ms "guest, python urllib on loopback, TCG vCPU"
  t=$(vm_run "$WEB_GET --time 10 /metrics") && figure $s "GET /metrics, $n real pools: median, max of 10" "${t// /, }" ms "guest, python urllib on loopback, TCG vCPU"
  t=$(vm_run "$WEB_GET --time 10 '/api/host?host=e2e'") && figure $s "GET /api/host: median, max of 10" "${t// /, }" ms "guest, python urllib on loopback, TCG vCPU"
  local rss; rss=$(vm_run "awk '/VmRSS/{print \$2}' /proc/\$(pgrep -x zwatch)/status")
  figure $s "zwatch VmRSS after 30 page, API and /metrics requests" "$((rss / 1024))" MiB "/proc/PID/status VmRSS"
}
