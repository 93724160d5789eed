//go:build !unix

package cache

import (
	"errors"
	"io/fs"
	"os"
)

// snapshotModesApply tells whether permission bits say who may read and
// write a file: not outside Unix, where Go reports fixed modes.
const snapshotModesApply = false

// openSnapshotFile opens the snapshot file at path for reading, refusing a
// symbolic link and anything but a regular file. Outside Unix, ownership
// and permission bits do not mean what they mean there, and only what
// checkSnapshotFileInfo can read is checked.
func openSnapshotFile(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, errors.New("refused: the snapshot file is a symbolic link")
	}
	if err := checkSnapshotFileInfo(info); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// checkSnapshotOwner accepts every owner: the platform has no Unix user IDs.
func checkSnapshotOwner(fs.FileInfo, string) error { return nil }
