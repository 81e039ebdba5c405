package decimal

import (
	"math"
	"testing"
)

func TestShort(t *testing.T) {
	tests := []struct {
		x    float64
		want string
	}{
		{20000, "20000"}, {123456, "123456"}, {2.5, "2.5"}, {2, "2"}, {0.01, "0.01"},
		{10.0 / 3, "3.333"}, {0.012345, "0.01235"}, {-2.5, "-2.5"}, {0, "0"}, {math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		if got := Short(tt.x); got != tt.want {
			t.Errorf("Short(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}
