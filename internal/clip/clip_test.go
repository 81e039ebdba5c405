package clip

import (
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"one too many", 11, "one too ma…"},
		{"ünïcödé wörds", 5, "ünïc…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"x", 0, ""},
		{"", 3, ""},
	}
	for _, tc := range cases {
		got := Text(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > max(tc.n, 0) {
			t.Errorf("Text(%q, %d) = %q: not valid UTF-8 within %d characters", tc.in, tc.n, got, tc.n)
		}
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"  two\n lines\tand\x00 a nul  ", 40, "two lines and a nul"},
		{"EAGLE-3,\r\n4 draft tokens", 12, "EAGLE-3, 4 …"},
		{"\x1b[31mred\x1b[0m", 20, "[31mred[0m"},
	}
	for _, tc := range cases {
		if got := Line(tc.in, tc.n); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
