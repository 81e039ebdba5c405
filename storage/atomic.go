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
	return writeFileAtomic(path, data, perm, true)
}

// writeFileAtomic is WriteFileAtomic; without syncFolder the caller syncs
// the folder itself (syncDir), once for many files.
func writeFileAtomic(path string, data []byte, perm os.FileMode, syncFolder bool) error {
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
	if syncFolder {
		syncDir(dir)
	}
	return nil
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // best effort: some file systems cannot sync a folder
		d.Close()
	}
}

// diskError says in words what went wrong writing to disk: one sentence.
// The cause stays reachable with errors.Is and errors.As; its own text
// (which names a temp file and repeats the errno) is left out of the
// sentence when the sentence already says what it means.
func diskError(what string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return &DiskError{Err: err, Msg: fmt.Sprintf("could not %s: the disk is full; free some space and try again (nothing saved earlier was lost)", what)}
	case errors.Is(err, syscall.EROFS):
		return &DiskError{Err: err, Msg: fmt.Sprintf("could not %s: the folder is on a read-only disk", what)}
	case errors.Is(err, fs.ErrPermission):
		return &DiskError{Err: err, Msg: fmt.Sprintf("could not %s: permission denied; check who owns the folder and that it is writable", what)}
	}
	return &DiskError{Err: err, Msg: fmt.Sprintf("could not %s: %v", what, err)}
}

// DiskError is a failed write or read of the app's own files.
type DiskError struct {
	Msg string
	Err error
}

func (e *DiskError) Error() string { return e.Msg }
func (e *DiskError) Unwrap() error { return e.Err }
