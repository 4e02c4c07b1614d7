package confine

import (
	"os"
	"syscall"
)

// ID is a file's identity: its device and inode. Two paths with one ID
// are one file (a hard link, or a link to it).
type ID struct{ Dev, Ino uint64 }

// Identity is the file at p's ID (links followed), false where it cannot
// be looked at.
func Identity(p string) (ID, bool) {
	st, err := os.Stat(p)
	if err != nil {
		return ID{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ID{}, false
	}
	return ID{uint64(sys.Dev), sys.Ino}, true
}
