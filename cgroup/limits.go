package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ChargeBatchBytes is how far below its limit a cgroup's usage can stop
// when a charge fails (the kernel charges 64 pages at a time).
const ChargeBatchBytes = 64 * 4096

// LimitHits reads how often the container's usage hit its own hard limit:
// v1 counts failed charges in memory.failcnt (and memory.memsw.failcnt,
// which a memory+swap limit equal to the limit hits first), and as some
// kernels leave those at 0, a peak (since the step began) within a charge
// batch of the limit counts one more; v2 counts memory.events' max. A kill
// with none was not the container's own limit.
func (r *Reader) LimitHits() (int64, bool) {
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.memDir, "memory.events"))
		if err != nil {
			return 0, false
		}
		n, ok := FlatKeyed(b, "max")
		return n, ok
	}
	var total int64
	known := false
	for _, name := range []string{"memory.failcnt", "memory.memsw.failcnt"} {
		if n, err := readInt(filepath.Join(r.memDir, name)); err == nil {
			total, known = total+n, true
		}
	}
	limit, errL := readInt(filepath.Join(r.memDir, "memory.limit_in_bytes"))
	peak, errP := readInt(filepath.Join(r.memDir, "memory.max_usage_in_bytes"))
	if errL == nil && errP == nil && limit < 1<<50 && peak >= limit-ChargeBatchBytes {
		total++
	}
	return total, known
}

// PidsLimitHits reads the pids controller's count of refused forks
// (pids.events' max), v1 in the pids hierarchy beside the memory one,
// v2 in the container's own directory; 0 when unreadable.
func (r *Reader) PidsLimitHits() int {
	dir := r.memDir
	if r.version == 1 {
		dir = pidsDirV1(r.memDir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pids.events"))
	if err != nil {
		return 0
	}
	n, _ := FlatKeyed(b, "max")
	return int(n)
}

// pidsDirV1 is the pids hierarchy's directory of a v1 memory cgroup
// directory (…/memory/docker/<id> → …/pids/docker/<id>); inside a
// container, whose own cgroup is the hierarchy's mount itself,
// /sys/fs/cgroup/memory → /sys/fs/cgroup/pids.
func pidsDirV1(memDir string) string { return siblingDirV1(memDir, "pids") }

// siblingDirV1 is a v1 cgroup's directory in controller's hierarchy
// beside the memory one (the same path under it); memDir where it is not
// under a memory hierarchy.
func siblingDirV1(memDir, controller string) string {
	if filepath.Base(memDir) == "memory" {
		return filepath.Join(filepath.Dir(memDir), controller)
	}
	rel := filepath.Base(memDir)
	for d := filepath.Dir(memDir); d != "/" && d != "."; d = filepath.Dir(d) {
		if filepath.Base(d) == "memory" {
			return filepath.Join(filepath.Dir(d), controller, rel)
		}
		rel = filepath.Join(filepath.Base(d), rel)
	}
	return memDir
}

// MemoryLimit reads the hard memory limit the kernel enforces on the
// container now (v2 memory.max, v1 memory.limit_in_bytes): 0 for none
// ("max", or v1's page-rounded "unlimited"); false when unreadable.
func (r *Reader) MemoryLimit() (int64, bool) {
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.memDir, "memory.max"))
		if err != nil {
			return 0, false
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, true
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	n, err := readInt(filepath.Join(r.memDir, "memory.limit_in_bytes"))
	if err != nil {
		return 0, false
	}
	if n >= 1<<50 {
		return 0, true
	}
	return n, true
}

// CPULimit reads the CPU bandwidth limit the kernel enforces on the
// container now, in CPUs (quota / period: v2 cpu.max, v1
// cpu.cfs_quota_us and cpu.cfs_period_us): 0 for none; false when
// unreadable.
func (r *Reader) CPULimit() (float64, bool) {
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.memDir, "cpu.max"))
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(b))
		if len(f) != 2 {
			return 0, false
		}
		if f[0] == "max" {
			return 0, true
		}
		q, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || p <= 0 {
			return 0, false
		}
		return q / p, true
	}
	if r.throttleDir == "" {
		return 0, false
	}
	q, err1 := readInt(filepath.Join(r.throttleDir, "cpu.cfs_quota_us"))
	p, err2 := readInt(filepath.Join(r.throttleDir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil || p <= 0 {
		return 0, false
	}
	if q < 0 {
		return 0, true
	}
	return float64(q) / float64(p), true
}

// PidsMax reads the pids limit the kernel enforces on the container now
// (pids.max): 0 for none; false when unreadable.
func (r *Reader) PidsMax() (int64, bool) {
	dir := r.memDir
	if r.version == 1 {
		dir = pidsDirV1(r.memDir)
	}
	n, err := readInt(filepath.Join(dir, "pids.max"))
	if err != nil {
		return 0, false
	}
	return max(n, 0), true
}

// OtherLimits reads the limits the kernel enforces on the container now
// beyond its memory, CPU and pids maxima (MemoryLimit, CPULimit,
// PidsMax): its swap limit, its memory guarantee, its CPU weight, and
// the CPUs and memory nodes it may run on (cpuset, `docker update
// --cpuset-cpus`), each by its file's name, as the file says (trimmed).
// A file that cannot be read (a controller not there) is left out.
func (r *Reader) OtherLimits() map[string]string {
	type file struct{ dir, name string }
	var files []file
	if r.version == 2 {
		for _, n := range []string{"memory.swap.max", "memory.low", "cpu.weight", "cpuset.cpus", "cpuset.mems"} {
			files = append(files, file{r.memDir, n})
		}
	} else {
		files = append(files, file{r.memDir, "memory.memsw.limit_in_bytes"}, file{r.memDir, "memory.soft_limit_in_bytes"})
		if r.throttleDir != "" {
			files = append(files, file{r.throttleDir, "cpu.shares"})
		}
		cpuset := siblingDirV1(r.memDir, "cpuset")
		if cpuset != r.memDir {
			files = append(files, file{cpuset, "cpuset.cpus"}, file{cpuset, "cpuset.mems"})
		}
	}
	out := map[string]string{}
	for _, f := range files {
		if b, err := os.ReadFile(filepath.Join(f.dir, f.name)); err == nil {
			out[f.name] = strings.TrimSpace(string(b))
		}
	}
	return out
}
