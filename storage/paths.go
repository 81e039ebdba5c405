// Package storage keeps everything Kovara Desktop stores on the user's
// machine: the results library, saved endpoints, kovara.yaml manifests and
// API keys in the OS keyring.
package storage

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// HomeEnv overrides both folders (tests always set it to a temp folder).
const HomeEnv = "KOVARA_DESKTOP_HOME"

const appDir = "kovara-desktop"

// Dirs are the two folders the app writes to.
type Dirs struct {
	Data   string // results library
	Config string // saved endpoints, app settings
}

// DefaultDirs returns the folders by OS convention, or under
// $KOVARA_DESKTOP_HOME when it is set.
func DefaultDirs() (Dirs, error) {
	if h := os.Getenv(HomeEnv); h != "" {
		return Dirs{Data: filepath.Join(h, "data"), Config: filepath.Join(h, "config")}, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return Dirs{}, errors.New("cannot find your home folder: set KOVARA_DESKTOP_HOME to a folder the app may write to")
	}
	return dirsFor(runtime.GOOS, home, os.Getenv), nil
}

// dirsFor applies each OS's convention; split out so every OS is testable.
func dirsFor(goos, home string, getenv func(string) string) Dirs {
	switch goos {
	case "windows":
		base := getenv("AppData")
		if base == "" {
			base = filepath.Join(home, "AppData", "Roaming")
		}
		return Dirs{Data: filepath.Join(base, appDir), Config: filepath.Join(base, appDir)}
	case "darwin":
		base := filepath.Join(home, "Library", "Application Support", appDir)
		return Dirs{Data: base, Config: base}
	}
	data := getenv("XDG_DATA_HOME")
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(home, ".local", "share")
	}
	config := getenv("XDG_CONFIG_HOME")
	if config == "" || !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	return Dirs{Data: filepath.Join(data, appDir), Config: filepath.Join(config, appDir)}
}
