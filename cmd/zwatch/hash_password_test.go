package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

func hashPassword(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newHashPasswordCmd(nil)
	var out, errb bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if strings.Contains(out.String()+errb.String(), "s3cret-Pass") {
		t.Errorf("the password was printed: %q %q", out.String(), errb.String())
	}
	return out.String(), err
}

func TestHashPasswordFromStdinVerifies(t *testing.T) {
	out, err := hashPassword(t, "s3cret-Pass\n")
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.TrimSpace(out)
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cret-Pass")); err != nil {
		t.Fatalf("hash %q does not verify: %v", hash, err)
	}
	if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost < minHashCost {
		t.Errorf("cost %d (%v), want at least %d", cost, err, minHashCost)
	}
	// Without a line end, and with a CRLF, the same password.
	for _, in := range []string{"s3cret-Pass", "s3cret-Pass\r\n"} {
		out, err := hashPassword(t, in, "--cost", "10")
		if err != nil {
			t.Fatal(err)
		}
		if bcrypt.CompareHashAndPassword([]byte(strings.TrimSpace(out)), []byte("s3cret-Pass")) != nil {
			t.Errorf("input %q: hash does not verify", in)
		}
	}
}

func TestHashPasswordRefusesBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		want  string
	}{
		"empty":     {"\n", nil, "empty password"},
		"too long":  {strings.Repeat("x", 73) + "\n", nil, "at most 72"},
		"no line":   {strings.Repeat("x", maxPasswordInput+10), nil, "no line end"},
		"low cost":  {"s3cret-Pass\n", []string{"--cost", "4"}, "--cost 4"},
		"high cost": {"s3cret-Pass\n", []string{"--cost", "40"}, "--cost 40"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := hashPassword(t, tc.stdin, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestHashPasswordOnATerminal runs hash-password on a real pseudo-terminal
// (util-linux script): it prompts twice, echoes neither password, and
// refuses two that differ.
func TestHashPasswordOnATerminal(t *testing.T) {
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not installed: no pseudo-terminal to test on")
	}
	for name, tc := range map[string]struct {
		second string
		want   string
		code   int
	}{
		"same":   {"s3cret-Pass", "$2a$10$", 0},
		"differ": {"other-Pass", "the two passwords differ", exitUsage},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, scriptPath, "-qec", shellQuote(os.Args[0])+" hash-password --cost 10", "/dev/null")
			cmd.Env = append(os.Environ(), runMainEnv+"=1")
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Type each password once its prompt is there, as a person would.
			var seen bytes.Buffer
			answers := []struct{ prompt, line string }{{"Password: ", "s3cret-Pass"}, {"again: ", tc.second}}
			buf := make([]byte, 256)
			for {
				n, err := out.Read(buf)
				seen.Write(buf[:n])
				if len(answers) > 0 && strings.Contains(seen.String(), answers[0].prompt) {
					time.Sleep(100 * time.Millisecond) // echo goes off right after the prompt
					io.WriteString(in, answers[0].line+"\n")
					answers = answers[1:]
				}
				if err != nil {
					break
				}
			}
			in.Close()
			err = cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			text := seen.String()
			if code != tc.code || !strings.Contains(text, tc.want) {
				t.Errorf("exit %d, output %q; want %d and %q", code, text, tc.code, tc.want)
			}
			if strings.Contains(text, "s3cret-Pass") || strings.Contains(text, "other-Pass") {
				t.Errorf("a password was echoed: %q", text)
			}
			if i := strings.Index(text, "$2a$"); code == 0 && (i < 0 || len(text) < i+60 ||
				bcrypt.CompareHashAndPassword([]byte(text[i:i+60]), []byte("s3cret-Pass")) != nil) {
				t.Errorf("no hash of the password in %q", text)
			}
		})
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
