//go:build !unix

package snapshot

import (
	"errors"
	"io/fs"
	"os"
)

// ModesApply tells whether permission bits say who may read and write a
// file: not outside Unix, where Go reports fixed modes.
const ModesApply = false

// openFile opens the snapshot file at path for reading, refusing a
// symbolic link and anything but a regular file. Outside Unix, ownership
// and permission bits do not mean what they mean there, and only what
// checkFileInfo can read is checked.
func openFile(path string) (*os.File, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, errors.New("refused: the snapshot file is a symbolic link")
	}
	if err := checkFileInfo(info); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// checkOwner accepts every owner: the platform has no Unix user IDs.
func checkOwner(fs.FileInfo, string) error { return nil }
