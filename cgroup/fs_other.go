//go:build !linux

package cgroup

import "os"

// onCgroupFS: only Linux has cgroup file systems.
func onCgroupFS(*os.File) bool { return false }
