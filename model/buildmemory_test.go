package model

import "testing"

// A build's memory bound: the run's, none, or by default the larger of
// 2 GiB and the task's own memory.
func TestBuildMemory(t *testing.T) {
	for _, c := range []struct {
		flag, task, want int64
	}{
		{0, 128 * MiB, 2048 * MiB},
		{0, 8192 * MiB, 8192 * MiB},
		{512 * MiB, 8192 * MiB, 512 * MiB},
		{-1, 128 * MiB, 0},
	} {
		if got := BuildMemory(Build{MemoryBytes: c.flag}, c.task); got != c.want {
			t.Errorf("BuildMemory(--build-memory %d, task %d) = %d, want %d", c.flag, c.task, got, c.want)
		}
	}
}
