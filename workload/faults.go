package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fillDir writes mib MiB of zeros into dir, as a task filling its disk
// does; a full disk fails the step with the system's own words (ENOSPC
// reads "no space left on device").
func fillDir(dir string, mib float64, stdout, stderr io.Writer) int {
	f, err := os.CreateTemp(dir, "fill-*")
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for written := 0.0; written < mib; written++ {
		if _, err := f.Write(chunk); err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return 1
		}
	}
	if err := f.Sync(); err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %.0f MiB to %s\n", mib, filepath.Dir(f.Name()))
	return 0
}

// cgroupFile reads an integer from the container's own memory cgroup
// (v2's unified file first, then v1's); "max" is 0 (no limit).
func cgroupFile(v2, v1 string) (int64, error) {
	for _, p := range []string{filepath.Join("/sys/fs/cgroup", v2), filepath.Join("/sys/fs/cgroup/memory", v1)} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, nil
		}
		return strconv.ParseInt(s, 10, 64)
	}
	return 0, fmt.Errorf("no memory cgroup file %s or %s readable in the container", v2, v1)
}

// holdAtLimit grows the step's memory until the container's usage is
// within a few pages of its hard limit and keeps touching it: the working
// set pinned at the limit, as a task whose peak sits on its limit is,
// until the step ends or its time limit does.
func holdAtLimit(m *memory, stop <-chan struct{}, stderr io.Writer) {
	limit, err := cgroupFile("memory.max", "memory.limit_in_bytes")
	if err != nil || limit <= 0 || limit > 1<<40 {
		fmt.Fprintf(stderr, "hold_at_limit: no hard limit to hold at (%v)\n", err)
		return
	}
	const margin = 512 << 10
	for {
		select {
		case <-stop:
			return
		default:
		}
		if usage, err := cgroupFile("memory.current", "memory.usage_in_bytes"); err == nil && usage < limit-margin {
			m.grow(float64(min(limit-margin-usage, 1<<20)) / float64(1<<20))
			continue
		}
		for _, c := range m.chunks {
			for i := 0; i < len(c); i += 4096 {
				c[i]++
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
