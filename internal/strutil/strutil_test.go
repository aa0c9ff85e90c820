package strutil

import "testing"

func TestFirstNonEmpty(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"", ""}, ""},
		{[]string{"", "sdb", "sdc"}, "sdb"},
		{[]string{" ", "sdb"}, " "}, // white space is a value here
	} {
		if got := FirstNonEmpty(c.in...); got != c.want {
			t.Errorf("FirstNonEmpty(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFirstNonBlank(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{" ", "\n"}, ""},
		{[]string{"  ", " SN123 ", "other"}, "SN123"},
	} {
		if got := FirstNonBlank(c.in...); got != c.want {
			t.Errorf("FirstNonBlank(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
