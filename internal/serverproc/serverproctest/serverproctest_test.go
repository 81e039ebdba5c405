package serverproctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestGone(t *testing.T) {
	t.Parallel()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	tests := []struct {
		name string
		pid  int
		want bool
	}{
		{"this process", os.Getpid(), false},
		{"a process that ended", ended.Process.Pid, true},
	}
	for _, tc := range tests {
		file := filepath.Join(t.TempDir(), "pid")
		if err := os.WriteFile(file, []byte(strconv.Itoa(tc.pid)), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := Gone(t, file); got != tc.want {
			t.Errorf("%s: Gone %v, want %v", tc.name, got, tc.want)
		}
	}
}
