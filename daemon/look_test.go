package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zwatch/zwatch/internal/browsertest"
	"github.com/zwatch/zwatch/internal/testutil"
	"github.com/zwatch/zwatch/views/statusview"
)

// standInTools are zpool, zfs and smartctl replaying the real outputs of
// capture b1 (pool vault DEGRADED, virtio-ZWV0001 offline; pool fast
// ONLINE) and the guest's smartctl readings of four of their disks.
func standInTools(t *testing.T, dir string) (zpool, zfsCmd, smartctl string) {
	t.Helper()
	abs, err := filepath.Abs(captured)
	if err != nil {
		t.Fatal(err)
	}
	zpool = testutil.WriteScript(t, dir, "zpool", fmt.Sprintf(`#!/bin/sh
case "$*" in
"list -Hp"*) exec cat %[1]q/b1-offline.zpool-list-Hp.txt ;;
"status -j"*) exec cat %[1]q/b1-offline.zpool-status-j.json ;;
"status"*) exec cat %[1]q/b1-offline.zpool-status-p-P.txt ;;
esac
exit 0
`, abs))
	zfsCmd = testutil.WriteScript(t, dir, "zfs", fmt.Sprintf(`#!/bin/sh
case "$*" in
"version -j") exec cat %[1]q/l0-version.zfs-version-j.json ;;
"version") exec cat %[1]q/l0-version.zfs-version.txt ;;
"list -Hp -t filesystem,volume "*) exec cat %[1]q/k1-healthy.zfs-list-datasets.txt ;;
"list -Hp -t snapshot "*) exec cat %[1]q/k1-healthy.zfs-list-snapshots.txt ;;
esac
exec cat %[1]q/b1-offline.zfs-list-Hp.txt
`, abs))
	smartctl = testutil.WriteScript(t, dir, "smartctl", fmt.Sprintf(`#!/bin/sh
for last; do :; done
case "$last" in
*WCC7K0000001) exec cat %[1]q/a.smartctl-a-json-ata.json ;;
*S3Z9NB0K000003) exec cat %[1]q/a.smartctl-a-json-ata-ssd.json ;;
/dev/nvme0) exec cat %[1]q/a.smartctl-a-json-nvme.json ;;
*35000c500a0000001) exec cat %[1]q/a.smartctl-a-json-scsi.json ;;
esac
echo "stand-in: unexpected argv: $*" >&2
exit 2
`, abs))
	return zpool, zfsCmd, smartctl
}

// TestStatusPageOfARealRun runs zwatch on the recorded outputs and reads
// what a person and Prometheus see: the API tells the degraded pool with
// its offline disk highlighted, /metrics passes promtool, and the page in
// real headless Chromium shows the pool, the disk and a drawn plot, also
// on a phone's screen.
func TestStatusPageOfARealRun(t *testing.T) {
	dir := t.TempDir()
	zpool, zfsCmd, smartctl := standInTools(t, dir)
	cfg := fmt.Sprintf(`
host: nas1
state_dir: %s
zfs: {zpool: %s, zfs: %s, list_interval: 1s, status_interval: 1s, follow_events: false}
smart:
  smartctl: %s
  devices:
    - device: /dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0000001
    - device: /dev/disk/by-id/ata-Samsung_SSD_860_EVO_1TB_S3Z9NB0K000003
    - device: /dev/nvme0
    - device: /dev/disk/by-id/scsi-35000c500a0000001
kernel: {enabled: false}
http: {listen: "127.0.0.1:0"}
rules: {disabled: [MonitoringBlindSpot]}
notify: {console: true}
`, filepath.Join(dir, "state"), zpool, zfsCmd, smartctl)
	addrs := make(chan net.Addr, 1)
	startDaemon(t, cfg, Options{HTTPReady: func(a net.Addr) { addrs <- a }})
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a.String()
	case <-time.After(30 * time.Second):
		t.Fatal("the status page did not listen within 30 s")
	}

	var host statusview.Host
	deadline := time.Now().Add(60 * time.Second)
	for {
		body := get(t, base+"/api/host?host=nas1")
		host = statusview.Host{}
		if json.Unmarshal(body, &host) == nil && len(host.Alerts) > 0 && len(host.Pools) == 2 && smartDisks(host) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API never showed both pools, 4 SMART readings and an alert: %s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	vault := host.Pools[1]
	if vault.Name != "vault" || vault.State != "DEGRADED" {
		t.Fatalf("pools %+v", host.Pools)
	}
	offline := false
	for _, v := range vault.Vdevs {
		if strings.Contains(v.Path, "virtio-ZWV0001") && v.State == "OFFLINE" && v.Problem {
			offline = true
		}
	}
	if !offline {
		t.Errorf("the offline disk is not highlighted: %+v", vault.Vdevs)
	}

	// The history has vault's capacity from the first minutes on.
	for {
		var res struct {
			T      []int64                    `json:"t"`
			Series map[string]json.RawMessage `json:"series"`
		}
		body := get(t, base+"/api/history?host=nas1&source=pool/vault&range=1d")
		if json.Unmarshal(body, &res) == nil && len(res.T) > 0 && res.Series["capacity_percent"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no capacity point of vault in the history: %s", body)
		}
		time.Sleep(200 * time.Millisecond)
	}

	metrics := get(t, base+"/metrics")
	if !strings.Contains(string(metrics), `zfs_pool_health{host="nas1",pool="vault"} 1`) {
		t.Errorf("/metrics lacks vault's health 1 (DEGRADED)")
	}
	promtool(t, metrics)

	tab := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`article.pool[data-pool="vault"] tr.vdev.problem`)),
		chromedp.WaitVisible(chromedp.CSS(`article.pool[data-pool="vault"] figure.plot[data-drawn="true"] canvas`))); err != nil {
		browsertest.Screenshot(t, tab, "real-run-failed.png")
		t.Fatalf("the page with its offline disk and a plot: %v", err)
	}
	row := browsertest.Eval[string](t, tab, `[...document.querySelectorAll('article.pool[data-pool="vault"] tr.vdev.problem')].map(r => r.textContent).find(t => t.includes("virtio-ZWV0001")) || ""`)
	if !strings.Contains(row, "OFFLINE") {
		t.Errorf("highlighted row %q", row)
	}
	browsertest.Screenshot(t, tab, "real-run-desktop.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`figure.plot[data-drawn="true"] canvas`))); err != nil {
		t.Fatal(err)
	}
	if w := browsertest.Eval[[]int](t, tab, `[document.documentElement.scrollWidth, window.innerWidth]`); len(w) != 2 || w[0] > w[1] {
		t.Errorf("horizontal scroll on a phone: scrollWidth, innerWidth = %v", w)
	}
	browsertest.Screenshot(t, tab, "real-run-phone.png")
}

func smartDisks(h statusview.Host) int {
	n := 0
	for _, d := range h.Disks {
		if d.SmartAt != nil {
			n++
		}
	}
	return n
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", url, resp.StatusCode, err, body)
	}
	return body
}

// promtool checks a scrape the way Prometheus' own linter does; skipped
// without promtool unless ZW_REQUIRE_TOOLS=1.
func promtool(t *testing.T, scrape []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("ZW_REQUIRE_TOOLS") == "1" {
			t.Fatal("ZW_REQUIRE_TOOLS=1 but promtool is missing: install prometheus (scripts/install-deps.sh --test)")
		}
		t.Log("promtool not installed: /metrics not linted")
		return
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(scrape))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
