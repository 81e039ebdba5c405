package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFileAtomic replaces path with data so that a crash leaves either the
// old file or the new one, never a torn one: a temp file in the same
// folder, fsync, rename, then fsync of the folder.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return diskError("create the folder "+dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return diskError("write in "+dir, err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return diskError("write "+path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return diskError("write "+path, err)
	}
	if err := tmp.Sync(); err != nil {
		return diskError("write "+path, err)
	}
	if err := tmp.Close(); err != nil {
		return diskError("write "+path, err)
	}
	if err := os.Rename(name, path); err != nil {
		return diskError("replace "+path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: some file systems cannot sync a folder
		d.Close()
	}
	return nil
}

// diskError says in words what went wrong writing to disk.
func diskError(what string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("could not %s: the disk is full; free some space and try again (nothing saved earlier was lost): %w", what, err)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("could not %s: the folder is on a read-only disk: %w", what, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("could not %s: permission denied; check who owns the folder: %w", what, err)
	}
	return fmt.Errorf("could not %s: %w", what, err)
}
