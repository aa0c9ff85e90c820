package replace

import (
	"os/exec"
	"testing"
)

var hostileNames = []string{
	"",
	"plain",
	"/dev/disk/by-id/ata-WDC_WD30EFRX-68EUZN0_WD-WMC4N1768104",
	"with space",
	"it's",
	"''",
	`double"quote`,
	"$HOME",
	"${IFS}",
	"`reboot`",
	"$(reboot)",
	"back\\slash",
	"new\nline",
	"tab\there",
	"semi;colon",
	"amp&&er",
	"pipe|x",
	"glob*?[a]",
	"~tilde",
	"#hash",
	"-dash",
	"!bang",
	"<redir>",
	"ünïcödé",
	"'; rm -rf / #",
}

// TestShellQuoteRoundTrip hands every quoted name to a real sh and checks
// that the one argument it receives is the name, byte for byte.
func TestShellQuoteRoundTrip(t *testing.T) {
	tried := 0
	for _, shell := range []string{"sh", "dash", "bash", "busybox"} {
		sh, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		tried++
		t.Run(shell, func(t *testing.T) { roundTrip(t, sh, shell == "busybox") })
	}
	if tried == 0 {
		t.Skip("no POSIX shell found")
	}
}

func roundTrip(t *testing.T, sh string, busybox bool) {
	for _, name := range hostileNames {
		// sh parses the quoted word as the only positional argument and
		// prints it back with the argument count.
		script := "set -- " + ShellQuote(name) + "; printf '%s|%d' \"$1\" \"$#\""
		cmd := exec.Command(sh, "-c", script)
		if busybox {
			cmd = exec.Command(sh, "sh", "-c", script)
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: sh failed: %v", name, err)
		}
		if want := name + "|1"; string(out) != want {
			t.Errorf("ShellQuote(%q) = %s: sh saw %q, want %q", name, ShellQuote(name), out, want)
		}
	}
}

func TestShellQuoteLeavesSafeNamesBare(t *testing.T) {
	for _, s := range []string{"tank", "6544112441320430488", "/dev/disk/by-id/ata-ST6000VX001-2BD186_ZR12E9YV",
		"gpt/usb0", "locate=/dev/sda", "nvme-Samsung_SSD_970_EVO_1TB_S467NX0M123456", "usb-WD_Elements_25A2-0:0"} {
		if got := ShellQuote(s); got != s {
			t.Errorf("ShellQuote(%q) = %q, want it bare", s, got)
		}
	}
	if got := ShellQuote("it's"); got != `'it'\''s'` {
		t.Errorf("ShellQuote(it's) = %s", got)
	}
}

func TestShellCommand(t *testing.T) {
	got := ShellCommand("zpool", "replace", "my pool", "6544112441320430488", "/dev/disk/by-id/x$y")
	if want := `zpool replace 'my pool' 6544112441320430488 '/dev/disk/by-id/x$y'`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
