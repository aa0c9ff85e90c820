package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/term"
)

// maxPasswordInput bounds what hash-password reads from a pipe; bcrypt
// itself uses at most 72 bytes.
const maxPasswordInput = 4096

// minHashCost is the least bcrypt cost hash-password accepts: 10 is the
// library's default, already about 50 ms a try.
const minHashCost = 10

func newHashPasswordCmd(_ *globals) *cobra.Command {
	cost := 12
	cmd := &cobra.Command{
		Use:   "hash-password",
		Short: "Print the bcrypt hash of a password, for http.users in the config",
		Long: `Read a password and print its bcrypt hash, to write as a login's
password_hash under http.users (the status page, its API and /metrics):

    http:
      users:
        - name: admin
          password_hash: '$2a$12$...'

On a terminal it asks twice without echoing; otherwise it reads the first
line of standard input (echo -n is not needed: the line end is dropped).
The password itself is never written anywhere.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cost < minHashCost || cost > bcrypt.MaxCost {
				return withCode(exitUsage, fmt.Errorf("--cost %d: want %d to %d (each step doubles the time a login check takes)", cost, minHashCost, bcrypt.MaxCost))
			}
			pass, err := readNewPassword(cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return withCode(exitUsage, err)
			}
			hash, err := bcrypt.GenerateFromPassword(pass, cost)
			if err != nil {
				return fmt.Errorf("hash the password: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(hash))
			return nil
		},
	}
	cmd.Flags().IntVar(&cost, "cost", cost, fmt.Sprintf("bcrypt cost, %d to %d", minHashCost, bcrypt.MaxCost))
	return cmd
}

// readNewPassword asks twice on a terminal, or reads one line from a pipe.
func readNewPassword(in io.Reader, prompt io.Writer) ([]byte, error) {
	var pass []byte
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		first, err := askPassword(int(f.Fd()), prompt, "Password: ")
		if err != nil {
			return nil, err
		}
		again, err := askPassword(int(f.Fd()), prompt, "Same password again: ")
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(first, again) {
			return nil, errors.New("the two passwords differ: run zwatch hash-password again")
		}
		pass = first
	} else {
		line, err := bufio.NewReader(io.LimitReader(in, maxPasswordInput)).ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read the password from standard input: %w", err)
		}
		if err != nil && len(line) == maxPasswordInput {
			return nil, fmt.Errorf("standard input has no line end in its first %d bytes: give the password on one line", maxPasswordInput)
		}
		pass = bytes.TrimRight(line, "\r\n")
	}
	switch {
	case len(pass) == 0:
		return nil, errors.New("empty password: give one on standard input or at the prompt")
	case len(pass) > 72:
		return nil, fmt.Errorf("password of %d bytes: bcrypt uses at most 72, so choose one of 72 bytes or fewer", len(pass))
	}
	return pass, nil
}

func askPassword(fd int, prompt io.Writer, text string) ([]byte, error) {
	fmt.Fprint(prompt, text)
	p, err := term.ReadPassword(fd)
	fmt.Fprintln(prompt)
	if err != nil {
		return nil, fmt.Errorf("read the password from the terminal: %w", err)
	}
	return p, nil
}
