// Package browsertest starts real headless Chromium for tests of the status
// page, and keeps what they show (screenshots) where a person can look.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's Chromium (scripts/install-deps.sh --test).
const ChromiumPath = "/usr/bin/chromium"

// Start starts headless Chromium for the test, or skips (fails under
// ZW_REQUIRE_TOOLS=1) when it is not installed. The browser reaches no
// network of its own: background networking, updates and sync are off.
func Start(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("ZW_REQUIRE_TOOLS") == "1" {
			t.Fatalf("ZW_REQUIRE_TOOLS=1 but %s is missing: install chromium (scripts/install-deps.sh --test)", ChromiumPath)
		}
		t.Skipf("%s not installed: the browser tests are skipped (install chromium to run them)", ChromiumPath)
	}
	dir := t.TempDir()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(ChromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", ChromiumPath, err)
	}
	return ctx
}

// OutDir is where screenshots go: $ZW_TEST_OUT, else the test's temp dir.
func OutDir(t *testing.T) string {
	if d := os.Getenv("ZW_TEST_OUT"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// Screenshot saves the whole page as name under OutDir.
func Screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	WriteOut(t, name, buf)
}

// WriteOut saves data as name under OutDir and logs where.
func WriteOut(t *testing.T, name string, data []byte) {
	t.Helper()
	path := filepath.Join(OutDir(t), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// Eval evaluates js in the tab and returns its value.
func Eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}
