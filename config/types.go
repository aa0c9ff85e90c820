package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/zwatch/zwatch/internal/input"
	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as a Go duration string (30s, 10m, 4h)
// or with a day suffix (7d, 35d), which people use for scrub and retention ages.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// UnmarshalYAML parses "30s", "10m", "4h", "35d".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML prints the duration the way it can be read back.
func (d Duration) MarshalYAML() (any, error) { return FormatDuration(time.Duration(d)), nil }

// ParseDuration accepts Go durations plus a whole-day suffix "d".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "d") {
		var days int
		if _, err := fmt.Sscanf(s, "%dd", &days); err == nil && fmt.Sprintf("%dd", days) == s {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write it like 30s, 10m, 4h or 35d", s)
	}
	return v, nil
}

// FormatDuration prints whole days, hours and minutes short (7d, 4h, 10m),
// everything else as Go does.
func FormatDuration(d time.Duration) string {
	switch {
	case d > 0 && d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d > 0 && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d > 0 && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// Secret is a credential. In the file it is written literally, as ${ENV_VAR},
// or as file:/path/to/secret (the file's content, trailing newline removed).
// It prints masked.
type Secret struct {
	Value string
	// Literal is true when the secret was written in the config file itself.
	Literal bool
	source  string
}

// UnmarshalYAML resolves the secret from the environment or a file.
func (s *Secret) UnmarshalYAML(n *yaml.Node) error {
	raw := n.Value
	switch {
	case strings.HasPrefix(raw, "${") && strings.HasSuffix(raw, "}"):
		name := raw[2 : len(raw)-1]
		v, ok := os.LookupEnv(name)
		if !ok {
			return fmt.Errorf("environment variable %s is not set: export it, or write the secret as file:/path", name)
		}
		*s = Secret{Value: v, source: raw}
	case strings.HasPrefix(raw, "file:"):
		path := strings.TrimPrefix(raw, "file:")
		b, err := readSecretFile(path)
		if err != nil {
			return err
		}
		*s = Secret{Value: strings.TrimRight(string(b), "\r\n"), source: raw}
	default:
		*s = Secret{Value: raw, Literal: raw != "", source: "literal"}
	}
	return nil
}

// MarshalYAML masks the value, showing only where it came from.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// String never reveals the secret.
func (s Secret) String() string {
	switch {
	case s.Value == "" && s.source == "":
		return ""
	case s.source != "" && s.source != "literal":
		return "****** (from " + s.source + ")"
	}
	return "******"
}

// IsSet reports whether a value is present.
func (s Secret) IsSet() bool { return s.Value != "" }

// Part is v, a piece of s (the token inside a channel URL): it counts as
// written where s was, and prints masked with s's origin.
func (s Secret) Part(v string) Secret {
	return Secret{Value: v, Literal: s.Literal && v != "", source: s.source}
}

// maxSecretFile bounds a secret file: a token or password is bytes, not
// megabytes, and a path pasted wrong (a log, a device) must not be read whole.
const maxSecretFile = 64 << 10

// readSecretFile reads a regular file of at most maxSecretFile bytes; a FIFO
// or device (file:/dev/stdin) would block or never end.
func readSecretFile(path string) ([]byte, error) {
	b, err := input.ReadRegular(path, maxSecretFile)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("secret file %s cannot be read: %v", path, pe)
	case err != nil:
		return nil, fmt.Errorf("secret file: %w", err)
	}
	return b, nil
}
