//go:build linux

package cgroup

import (
	"os"
	"syscall"
)

// onCgroupFS says whether f is a file of a cgroup file system (v1 or v2).
func onCgroupFS(f *os.File) bool {
	var st syscall.Statfs_t
	if syscall.Fstatfs(int(f.Fd()), &st) != nil {
		return true
	}
	const cgroupMagic, cgroup2Magic = 0x27e0eb, 0x63677270
	return st.Type == cgroupMagic || st.Type == cgroup2Magic
}
