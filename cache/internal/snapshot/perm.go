package snapshot

import (
	"fmt"
	"io/fs"
	"os"
)

// Snapshot files and their directory are owner-only: a snapshot holds a
// copy of the cluster's objects outside the API server's access control,
// and a file another user can replace would feed forged objects to the
// informer. The directory is created 0700 and files 0600; an existing
// directory that others may write to, or a file that is not the process
// user's own and owner-only, is refused with an error saying so.

// checkDir returns an error (wrapping fs.ErrNotExist when it is
// missing) unless dir is a directory of this process's user that neither
// its group nor others may write to.
func checkDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("refused: the snapshot directory %s is not a directory", dir)
	}
	if perm := info.Mode().Perm(); ModesApply && perm&0o022 != 0 {
		return fmt.Errorf("refused: the snapshot directory %s has mode %04o: others may write to it and so replace its files (make it 0700)", dir, perm)
	}
	return checkOwner(info, "directory "+dir)
}

// ensureDir creates dir owner-only (0700, with its missing parents)
// when it does not exist, then checks it as checkDir does.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return checkDir(dir)
}

// checkFileInfo returns an error unless info is a regular file of
// this process's user that only its owner may read or write.
func checkFileInfo(info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("refused: the snapshot file is not a regular file (%v)", info.Mode().Type())
	}
	if perm := info.Mode().Perm(); ModesApply && perm&0o077 != 0 {
		return fmt.Errorf("refused: the snapshot file has mode %04o; snapshot files are owner-only (0600)", perm)
	}
	return checkOwner(info, "file")
}
