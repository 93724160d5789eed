//go:build unix

package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ModesApply tells whether permission bits say who may read and write a
// file, as they do on Unix.
const ModesApply = true

// openFile opens the snapshot file at path for reading, refusing a
// symbolic link and anything checkFileInfo refuses. The checks are
// made on the opened file, so it cannot be swapped between check and read.
func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, errors.New("refused: the snapshot file is a symbolic link")
		}
		return nil, err
	}
	info, err := f.Stat()
	if err == nil {
		err = checkFileInfo(info)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// checkOwner returns an error unless info's owner is this process's
// (effective) user; what names the file or directory in the message.
func checkOwner(info fs.FileInfo, what string) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int64(st.Uid) != int64(uid) {
		return fmt.Errorf("refused: the snapshot %s belongs to user %d, not to this process's user %d", what, st.Uid, uid)
	}
	return nil
}
