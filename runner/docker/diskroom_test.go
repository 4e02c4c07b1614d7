package docker

import "testing"

// Round five, finding 4: the container's own /dev/shm filled by the task
// was counted as the machine's disk full. Only what the machine gives as
// disk (the writable layer, a volume, a bind mount, the operator's
// scratch tmpfs) is not the container's own; every other tmpfs is.
func TestOwnTmpfsIsTheContainersFixedTmpfsOnly(t *testing.T) {
	given := map[string]bool{"/scratch": true, "/app": true, "/data": true}
	for _, tt := range []struct {
		mp, fstype string
		own        bool
	}{
		{"/dev/shm", "tmpfs", true},  // the engine's fixed 64 MiB, at every ratio
		{"/dev", "tmpfs", true},      // likewise
		{"/mnt/ram", "tmpfs", true},  // a tmpfs the task mounted itself
		{"/mnt/ram2", "ramfs", true}, // no size at all, still memory
		{"/scratch", "tmpfs", false}, // the operator's (Options.Tmpfs): the faults suite's disk-full row
		{"/scratch/", "tmpfs", false},
		{"/data", "tmpfs", false},           // a volume of the engine's, whatever its driver made it
		{"/", "overlay", false},             // the writable layer, on the host's disk
		{"/", "fuse.fuse-overlayfs", false}, // likewise, rootless
		{"/app", "ext4", false},             // the disk knob's volume
		{"/etc/hosts", "ext4", false},       // a bind mount of the engine's
		{"/home/me/cache", "xfs", false},    // a bind mount not in given: still on a disk
	} {
		if got := ownTmpfs(tt.mp, tt.fstype, given); got != tt.own {
			t.Errorf("ownTmpfs(%q, %q) = %v, want %v: only a tmpfs the machine did not give as disk is the container's own", tt.mp, tt.fstype, got, tt.own)
		}
	}
}
