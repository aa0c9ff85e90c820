package collectors

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zwatch/zwatch/internal/execx"
	"github.com/zwatch/zwatch/model/zfs"
)

// argvRunner answers each argv (without the program name) from a table,
// recording what it was asked; an argv not in the table is rejected the way
// zpool rejects an option it does not know.
type argvRunner struct {
	answers map[string]execx.Result
	calls   []string
}

func (r *argvRunner) Run(_ context.Context, _ string, args ...string) (execx.Result, error) {
	argv := strings.Join(args, " ")
	r.calls = append(r.calls, argv)
	if res, ok := r.answers[argv]; ok {
		if res.ExitCode != 0 {
			return res, &execx.Error{Kind: execx.KindFailed, Command: "zpool " + argv, ExitCode: res.ExitCode, Stderr: string(res.Stderr)}
		}
		return res, nil
	}
	// What zpool_main.c prints for the first option getopt does not know,
	// then usage; exit 2.
	opt := "j"
	for _, a := range args {
		if a == "-j" || a == "-p" || a == "-s" {
			opt = a[1:]
			break
		}
	}
	stderr := "invalid option '" + opt + "'\nusage:\n\tstatus [-c [script1,script2,...]] ...\n"
	return execx.Result{Stderr: []byte(stderr), ExitCode: 2},
		&execx.Error{Kind: execx.KindFailed, Command: "zpool " + argv, ExitCode: 2, Stderr: stderr}
}

func capture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(captured + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestZpoolStatusAsksForJSONUntilRejected(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -p -s -P -v": {Stdout: capture(t, "b1-offline.zpool-status-p-P.txt")},
	}}
	c := &ZpoolStatus{Runner: r, Zpool: "zpool"}
	for range 2 {
		sd, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sd.Source != "text" || findPool(sd.Pools, "vault").State != zfs.StateDegraded {
			t.Fatalf("got %+v", sd)
		}
	}
	// Rejected once, -j is not asked for again.
	if want := []string{"status -j --json-int -p -P", "status -p -s -P -v", "status -p -s -P -v"}; !slices.Equal(r.calls, want) {
		t.Errorf("ran %q, want %q", r.calls, want)
	}
}

func TestZpoolStatusZoL07HasNoCounters(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -P -v": {Stdout: capture(t, "b1-offline.zpool-status-p-P.txt")},
	}}
	c := &ZpoolStatus{Runner: r, Zpool: "zpool"}
	for range 2 {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"status -j --json-int -p -P", "status -p -s -P -v", "status -s -P -v", "status -P -v", "status -P -v"}; !slices.Equal(r.calls, want) {
		t.Errorf("ran %q, want %q", r.calls, want)
	}
}

// A -j that fails for another reason (a pool gone between two commands) is
// no proof that zpool lacks it: the next read asks for JSON again.
func TestZpoolStatusOtherFailureKeepsJSON(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -j --json-int -p -P tank": {Stderr: []byte("cannot open 'tank': no such pool\n"), ExitCode: 1},
		"status -p -s -P -v tank":         {Stderr: []byte("cannot open 'tank': no such pool\n"), ExitCode: 1},
	}}
	c := &ZpoolStatus{Runner: r, Zpool: "zpool"}
	for range 2 {
		if _, err := c.ReadPool(context.Background(), "tank"); execx.KindOf(err) != execx.KindFailed || !strings.Contains(err.Error(), "no such pool") {
			t.Fatalf("err %v, want zpool's own failure", err)
		}
	}
	if want := []string{"status -j --json-int -p -P tank", "status -p -s -P -v tank", "status -j --json-int -p -P tank", "status -p -s -P -v tank"}; !slices.Equal(r.calls, want) {
		t.Errorf("ran %q, want %q", r.calls, want)
	}
}

// zwatch replace reads one pool under the names a person types.
func TestZpoolStatusShortNamesOfOnePool(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -j --json-int -p vault": {Stdout: capture(t, "b1-offline.zpool-status-j.json")},
	}}
	c := &ZpoolStatus{Runner: r, ShortNames: true}
	sd, err := c.ReadPool(context.Background(), "vault")
	if err != nil || sd.Source != "json" || findPool(sd.Pools, "vault") == nil {
		t.Fatalf("got %+v, %v", sd, err)
	}
	r = &argvRunner{answers: map[string]execx.Result{
		"status -p -s vault": {Stdout: capture(t, "b1-offline.zpool-status-p-P.txt")},
	}}
	c = &ZpoolStatus{Runner: r, ShortNames: true}
	if _, err := c.ReadPool(context.Background(), "vault"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"status -j --json-int -p vault", "status -p -s vault"}; !slices.Equal(r.calls, want) {
		t.Errorf("ran %q, want %q", r.calls, want)
	}
	r = &argvRunner{answers: map[string]execx.Result{
		"status -p -s -P -v": {Stdout: capture(t, "b1-offline.zpool-status-p-P.txt")},
	}}
	if _, err := (&ZpoolStatus{Runner: r, TextOnly: true}).Read(context.Background()); err != nil || !slices.Equal(r.calls, []string{"status -p -s -P -v"}) {
		t.Errorf("text only ran %q, err %v", r.calls, err)
	}
}

func TestZpoolStatusUnreadableIsAParseError(t *testing.T) {
	r := &argvRunner{answers: map[string]execx.Result{
		"status -j --json-int -p -P": {Stdout: []byte("{not json")},
	}}
	_, err := (&ZpoolStatus{Runner: r}).Read(context.Background())
	if ce := ErrorFor("zpool_status", "", err); ce.Kind != "parse" || !strings.Contains(ce.Message, "zpool status (json)") {
		t.Fatalf("got %+v", ce)
	}
}
