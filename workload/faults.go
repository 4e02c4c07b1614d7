package workload

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// thrashAtLimit holds anonymous memory mib/2 under the container's hard
// limit and reads a file of mib through a shared mapping, page by page,
// round and round: only half the file fits beside the program, so the
// kernel evicts its pages and reads them back (major faults) with the
// usage pinned at the limit, until the step ends or its time does. File
// pages are always reclaimable, so this thrashes without an OOM kill.
func thrashAtLimit(m *memory, mib float64, stop <-chan struct{}, stderr io.Writer) {
	limit, err := cgroupFile("memory.max", "memory.limit_in_bytes")
	if err != nil || limit <= 0 || limit > 1<<40 {
		fmt.Fprintf(stderr, "thrash_mb: no hard limit to thrash at (%v)\n", err)
		return
	}
	size := int(mib * (1 << 20))
	// What the container holds before the file (the program, its
	// libraries): the anonymous memory grows to fill the rest but half the
	// file.
	before, err := cgroupFile("memory.current", "memory.usage_in_bytes")
	if err != nil {
		fmt.Fprintf(stderr, "thrash_mb: %v\n", err)
		return
	}
	f, err := os.CreateTemp(thrashDir(), "thrash-*")
	if err != nil {
		fmt.Fprintf(stderr, "thrash_mb: %v\n", err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for n := 0; n < size; n += len(chunk) {
		if _, err := f.Write(chunk[:min(len(chunk), size-n)]); err != nil {
			fmt.Fprintf(stderr, "thrash_mb: %v\n", err)
			return
		}
	}
	// Written back, so that evicting the pages needs no write.
	if err := f.Sync(); err != nil {
		fmt.Fprintf(stderr, "thrash_mb: %v\n", err)
		return
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		fmt.Fprintf(stderr, "thrash_mb: %v\n", err)
		return
	}
	defer syscall.Munmap(data)
	// No read-around: each evicted page is its own major fault, as a
	// program reading its data at random has.
	_ = syscall.Madvise(data, syscall.MADV_RANDOM)
	if anon := limit - int64(size/2) - before; anon > 0 {
		m.grow(float64(anon) / (1 << 20))
	}
	// A few pages each 10 ms: up to ~1,600 major faults a second, a heavy
	// thrash (a stalled numpy task showed 450/s) that leaves the shared
	// disk to the others.
	var sum byte
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i = (i + 4096) % size {
		if i%(16*4096) == 0 {
			select {
			case <-stop:
				if sum == 1 {
					fmt.Fprint(stderr, "")
				}
				return
			case <-tick.C:
			}
		}
		sum += data[i]
	}
}

// thrashDir is a directory on the container's own disk (not a tmpfs,
// whose pages cannot be evicted without swap).
func thrashDir() string {
	for _, d := range []string{"/var/tmp", "/work", os.TempDir(), "/"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			if f, err := os.CreateTemp(d, "probe-*"); err == nil {
				f.Close()
				os.Remove(f.Name())
				return d
			}
		}
	}
	return "."
}
