package bus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// attack is one thing a second process tries against the listener; err
// is "" when it succeeded.
type attack struct {
	Name string `json:"name"`
	Err  string `json:"err"`
}

const attackPrefix = "ATTACK "

// TestAttackerProcess is the attacker: a second OS process (run by
// TestListenerAttacks, as the user nobody when the test runs as root) that
// knows the listener's address and nas1's password and tries everything.
func TestAttackerProcess(t *testing.T) {
	url := os.Getenv("ZWATCH_ATTACK_URL")
	if url == "" {
		t.Skip("run by TestListenerAttacks")
	}
	out := json.NewEncoder(os.Stdout)
	report := func(name string, err error) {
		a := attack{Name: name}
		if err != nil {
			a.Err = err.Error()
		}
		os.Stdout.WriteString(attackPrefix)
		_ = out.Encode(a)
	}
	connect := func(opts ...nats.Option) error {
		nc, err := nats.Connect(url, append(opts, nats.Timeout(3*time.Second), nats.NoReconnect())...)
		if err == nil {
			nc.Close()
		}
		return err
	}
	report("connect without credentials", connect())
	report("connect as nas1 with a wrong password", connect(nats.UserInfo("nas1", "guessed-password-1234")))
	report("connect as the server with a guessed password", connect(nats.UserInfo(ServerUser, "guessed-password-1234")))
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	report("connect with a foreign nkey", connect(nats.Nkey(pub, kp.Sign)))
	_, err := os.ReadFile(AuthPath(os.Getenv("ZWATCH_ATTACK_STATE")))
	report("read the credentials file", err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	agent, err := Open(ctx, Options{URL: url, User: "nas1", Password: os.Getenv("ZWATCH_ATTACK_PASSWORD"),
		NoStreams: true, InboxPrefix: AgentInbox("nas1"), Name: "attacker"}, nil)
	report("connect as nas1", err)
	if err != nil {
		return
	}
	defer agent.Close()
	violations := make(chan string, 64)
	agent.NC.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { violations <- err.Error() })
	// try runs op and returns at once when the server reports a
	// permissions violation naming subj (op itself would only time out).
	try := func(subj string, op func() error) error {
		res := make(chan error, 1)
		go func() { res <- op() }()
		var opErr error
		deadline := time.After(5 * time.Second)
		for {
			select {
			case v := <-violations:
				if strings.Contains(v, `"`+subj+`"`) {
					return errors.New(v)
				}
			case opErr = <-res:
				if opErr == nil {
					return nil
				}
				res = nil
			case <-deadline:
				return opErr
			}
		}
	}
	msg, _ := Wrap("heartbeat", "nas1", "attacker", time.Now(), map[string]any{})
	pubJS := func(subj string) error {
		return try(subj, func() error {
			pctx, c := context.WithTimeout(ctx, 3*time.Second)
			defer c()
			_, err := agent.JS.Publish(pctx, subj, msg)
			return err
		})
	}
	request := func(subj, body string) error {
		return try(subj, func() error {
			_, err := agent.NC.Request(subj, []byte(body), 3*time.Second)
			return err
		})
	}
	subscribe := func(subj string) error {
		return try(subj, func() error {
			sub, err := agent.NC.SubscribeSync(subj)
			if err != nil {
				return err
			}
			// No violation within a second: the subscription stands.
			_ = agent.NC.Flush()
			time.Sleep(time.Second)
			return sub.Unsubscribe()
		})
	}
	report("publish its own fact (acknowledged)", pubJS(Subject("nas1", "heartbeat")))
	report("publish a fact for nas2", pubJS(Subject("nas2", "zpool.status")))
	report("publish an alert as nas1", pubJS(Subject("nas1", KindAlert)))
	report("publish an alert as nas2", pubJS(Subject("nas2", KindAlert)))
	report("purge the outbox", request("$JS.API.STREAM.PURGE."+StreamAlerts, ""))
	report("delete the outbox", request("$JS.API.STREAM.DELETE."+StreamAlerts, ""))
	report("read the state bucket", request("$JS.API.STREAM.MSG.GET.KV_"+StateBucket, `{"last_by_subj":"$KV.`+StateBucket+`.k"}`))
	report("write the state bucket", request("$KV."+StateBucket+".k", "forged"))
	report("list the streams", request("$JS.API.STREAM.NAMES", ""))
	report("subscribe to the state bucket", subscribe("$KV."+StateBucket+".>"))
	report("subscribe to every fact", subscribe("zwatch.>"))
	report("subscribe to the server's replies", subscribe("_INBOX.>"))
}

// runAttacker runs TestAttackerProcess as a second process: as the user
// nobody when this test runs as root (a foreign local user), else as us.
func runAttacker(t *testing.T, url, stateDir, password string) map[string]string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestAttackerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ZWATCH_ATTACK_URL="+url, "ZWATCH_ATTACK_STATE="+stateDir, "ZWATCH_ATTACK_PASSWORD="+password)
	if os.Geteuid() == 0 {
		// nobody cannot read the go test build directory: copy the binary.
		dir, err := os.MkdirTemp("", "zwatch-attacker-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		bin := filepath.Join(dir, "attacker.test")
		copyFile(t, exe, bin)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Path, cmd.Dir = bin, dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("attacker process: %v\n%s%s", err, out, stderr.Bytes())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), attackPrefix)
		if !ok {
			continue
		}
		var a attack
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("attacker said %q: %v", line, err)
		}
		got[a.Name] = a.Err
	}
	if len(got) == 0 {
		t.Fatalf("attacker reported nothing:\n%s%s", out, stderr.Bytes())
	}
	return got
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// openStateDir is a state directory other local users may enter, so that
// only the credentials' own modes keep them out.
func openStateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "zwatch-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestListenerAttacks: with bus.listen set, a second process with no or
// wrong credentials cannot connect, and an agent's credentials let it
// publish its own facts and nothing else: no other host's fact, no alert,
// no JetStream API (the outbox cannot be purged, the state cannot be read),
// no subscription beyond its own replies. The agent is added while the
// server runs (no restart).
func TestListenerAttacks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := openStateDir(t)
	b, err := Open(ctx, Options{FactSubjects: testFactSubjects, StateDir: dir, Listen: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := os.Stat(AuthPath(dir))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v mode %v", err, st)
	}
	if dst, err := os.Stat(filepath.Dir(AuthPath(dir))); err != nil || dst.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory: %v mode %v", err, dst)
	}
	// What the attacks must not reach: an undelivered alert and some state.
	alert, _ := Wrap(KindAlert, "nas1", "rules", time.Now(), map[string]string{"id": "n1"})
	if err := b.Publish(ctx, Subject("nas1", KindAlert), alert); err != nil {
		t.Fatal(err)
	}
	kv, err := b.JS.KeyValue(ctx, StateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("real")); err != nil {
		t.Fatal(err)
	}

	pw, err := AddAgent(dir, "nas1", false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitAgentAccepted(t, b.ClientURL(), "nas1", pw)
	got := runAttacker(t, b.ClientURL(), dir, pw)

	mustFail := []string{
		"connect without credentials", "connect as nas1 with a wrong password", "connect as the server with a guessed password",
		"connect with a foreign nkey", "publish a fact for nas2", "publish an alert as nas1", "publish an alert as nas2",
		"purge the outbox", "delete the outbox", "read the state bucket", "write the state bucket", "list the streams",
		"subscribe to the state bucket", "subscribe to every fact", "subscribe to the server's replies",
	}
	if os.Geteuid() == 0 {
		mustFail = append(mustFail, "read the credentials file")
	}
	for _, name := range mustFail {
		e, ok := got[name]
		switch {
		case !ok:
			t.Errorf("attack %q not tried", name)
		case e == "":
			t.Errorf("attack %q succeeded", name)
		case strings.HasPrefix(name, "connect") && !strings.Contains(strings.ToLower(e), "authorization violation") &&
			!(name == "connect with a foreign nkey" && strings.Contains(e, "nkeys not supported by the server")):
			t.Errorf("attack %q failed for another reason than authorization: %s", name, e)
		case !strings.HasPrefix(name, "connect") && name != "read the credentials file" && !strings.Contains(strings.ToLower(e), "permissions violation"):
			t.Errorf("attack %q failed for another reason than permissions: %s", name, e)
		default:
			t.Logf("%s: refused (%s)", name, e)
		}
	}
	for _, name := range []string{"connect as nas1", "publish its own fact (acknowledged)"} {
		if e, ok := got[name]; !ok || e != "" {
			t.Errorf("%s: %q (tried %v)", name, e, ok)
		}
	}

	// The server side: the alert is still there, the state untouched,
	// only nas1's own heartbeat was stored.
	as, err := b.JS.Stream(ctx, StreamAlerts)
	if err != nil {
		t.Fatal(err)
	}
	if n := as.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("outbox holds %d messages, want the 1 undelivered alert", n)
	}
	if e, err := kv.Get(ctx, "k"); err != nil || string(e.Value()) != "real" {
		t.Errorf("state bucket: %v", err)
	}
	fs, err := b.JS.Stream(ctx, StreamFacts)
	if err != nil {
		t.Fatal(err)
	}
	info, err := fs.Info(ctx, jetstream.WithSubjectFilter("zwatch.>"))
	if err != nil {
		t.Fatal(err)
	}
	if len(info.State.Subjects) != 1 || info.State.Subjects[Subject("nas1", "heartbeat")] != 1 {
		t.Errorf("facts stream subjects %v, want nas1's heartbeat only", info.State.Subjects)
	}
}

// waitAgentAccepted waits until the running server reloaded its users and
// lets host in with pw: one reload period, plus bcrypt checks that take
// 1.5 s each under the race detector.
func waitAgentAccepted(t *testing.T, url, user, pw string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect(url, nats.UserInfo(user, pw), nats.Timeout(5*time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not let in 30s after add-host: %v", user, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
