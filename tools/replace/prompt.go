package replace

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// confirm asks a yes/no question; only an explicit yes goes on.
func (r *run) confirm(q string) error {
	if r.Yes {
		return nil
	}
	if r.in == nil {
		return errors.New("cannot ask for confirmation without input; use --yes to go ahead or --dry-run to see the commands")
	}
	fmt.Fprintf(r.Out, "\n%s [y/N] ", q)
	line, err := r.readLine()
	if err != nil {
		return err
	}
	if a := strings.ToLower(line); a == "y" || a == "yes" {
		return nil
	}
	fmt.Fprintln(r.Out, "Nothing was changed.")
	return ErrAborted
}

// pick asks for a number from 1 to n and returns its index.
func (r *run) pick(q string, n int) (int, error) {
	fmt.Fprintf(r.Out, "\n%s [1-%d] ", q, n)
	line, err := r.readLine()
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(line)
	if err != nil || i < 1 || i > n {
		fmt.Fprintln(r.Out, "Nothing was changed.")
		return 0, fmt.Errorf("%w: %q is not a number from 1 to %d", ErrAborted, line, n)
	}
	return i - 1, nil
}

func (r *run) readLine() (string, error) {
	line, err := r.in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("%w: no answer (input closed)", ErrAborted)
	}
	return strings.TrimSpace(line), nil
}
