package engine

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFields(t *testing.T) {
	t.Parallel()
	levels := []struct {
		in   string
		want []int
		err  string
	}{
		{"1,8,32", []int{1, 8, 32}, ""},
		{" 4 , 16 ,", []int{4, 16}, ""},
		{"", nil, "at least one"},
		{"1,x", nil, `"x" is not a whole number`},
		{"0", nil, "concurrency 0"},
		{"-2", nil, "concurrency -2"},
	}
	for _, tc := range levels {
		got, err := ParseLevels(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLevels(%q) err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseLevels(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseLevels(FormatLevels(got)); !slices.Equal(back, got) {
			t.Errorf("FormatLevels round trip of %v", got)
		}
	}
	if n, err := ParseCount("requests", " 100 ", 1); n != 100 || err != nil {
		t.Errorf("ParseCount: %d %v", n, err)
	}
	if _, err := ParseCount("requests", "0", 1); err == nil || !strings.Contains(err.Error(), "requests must be at least 1") {
		t.Errorf("ParseCount 0: %v", err)
	}
	if _, err := ParseCount("warmup", "a lot", 0); err == nil || !strings.Contains(err.Error(), "warmup") {
		t.Errorf("ParseCount text: %v", err)
	}
	if s, fixed, err := ParseSeed("-7"); s != -7 || !fixed || err != nil {
		t.Errorf("ParseSeed(-7) = %d, %v, %v; want -7, true, nil", s, fixed, err)
	}
	if _, fixed, err := ParseSeed("  "); fixed || err != nil {
		t.Errorf("ParseSeed(empty) = fixed %v, %v; want a fresh seed", fixed, err)
	}
	if _, _, err := ParseSeed("seven"); err == nil || !strings.Contains(err.Error(), "empty for a new seed") {
		t.Errorf("ParseSeed(seven): %v", err)
	}
	timeouts := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 120 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"90s", 90 * time.Second, true},
		{"2m", 2 * time.Minute, true},
		{"0", 0, false},
		{"-3s", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range timeouts {
		got, err := ParseTimeout(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseTimeout(%q) = %v, %v", tc.in, got, err)
		}
	}
}
