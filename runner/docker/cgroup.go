package docker

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// cgroupReader reads one container's memory and CPU from its cgroup files.
// The files stay open and are re-read from offset 0 (the kernel regenerates
// them on every read): at 20 Hz per trial, open and close would double the
// system calls.
type cgroupReader struct {
	version int    // 1 or 2
	memDir  string // v1: memory controller dir; v2: the unified dir
	cpuDir  string // v1: cpuacct dir; v2: the unified dir
	// throttleDir holds cpu.stat's CFS counters: v1's cpu controller
	// (which may be mounted apart from cpuacct); v2: the unified dir.
	throttleDir string

	files map[string]*cgFile
	buf   []byte
}

// file reads one cgroup file through its kept-open handle.
func (r *cgroupReader) file(path string) ([]byte, error) {
	if r.files == nil {
		r.files = map[string]*cgFile{}
	}
	f, ok := r.files[path]
	if !ok {
		var err error
		if f, err = openCgFile(path); err != nil {
			return nil, err
		}
		r.files[path] = f
	}
	if r.buf == nil {
		r.buf = make([]byte, 8192)
	}
	for {
		n, err := f.readAt0(r.buf)
		if err != nil {
			return nil, err
		}
		if n < len(r.buf) {
			return r.buf[:n], nil
		}
		r.buf = make([]byte, 2*len(r.buf))
	}
}

// close releases the kept-open files.
func (r *cgroupReader) close() {
	for _, f := range r.files {
		f.close()
	}
	r.files = nil
}

// memReading is one read of the memory files.
type memReading struct {
	usage, inactiveFile int64
	majorFaults         int64 // cumulative pgmajfault
	oomKills            int
	cpu                 model.CPUUse // cumulative
}

// cgroupVersion tells v1 from v2 by the unified hierarchy's root file.
func cgroupVersion(root string) int {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return 2
	}
	return 1
}

// procCgroupPaths parses /proc/<pid>/cgroup into controller → path ("" is
// the v2 unified entry).
func procCgroupPaths(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// cgroupCandidates lists where a container's cgroup may live, for the
// cgroupfs and systemd drivers, plus what /proc/<pid>/cgroup says (which
// also covers a custom --cgroup-parent).
func cgroupCandidates(root string, version int, id string, proc map[string]string) (mem, cpu []string) {
	if version == 2 {
		dirs := []string{
			filepath.Join(root, "docker", id),
			filepath.Join(root, "system.slice", "docker-"+id+".scope"),
		}
		if p, ok := proc[""]; ok && p != "/" {
			dirs = append(dirs, filepath.Join(root, p))
		}
		return dirs, dirs
	}
	for _, d := range []struct {
		ctrl string
		out  *[]string
	}{{"memory", &mem}, {"cpuacct", &cpu}} {
		bases := []string{filepath.Join(root, d.ctrl)}
		if d.ctrl == "cpuacct" {
			bases = append(bases, filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "cpuacct,cpu"))
		}
		for _, b := range bases {
			*d.out = append(*d.out, filepath.Join(b, "docker", id), filepath.Join(b, "system.slice", "docker-"+id+".scope"))
			if p, ok := proc[d.ctrl]; ok && p != "/" {
				*d.out = append(*d.out, filepath.Join(b, p))
			}
		}
	}
	return mem, cpu
}

// findCgroup locates a running container's cgroup files; pid is the
// container's init process on this host (0 when unknown).
func findCgroup(root, id string, pid int) (*cgroupReader, error) {
	version := cgroupVersion(root)
	proc := map[string]string{}
	if pid > 0 {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid)); err == nil {
			proc = procCgroupPaths(data)
		}
	}
	memC, cpuC := cgroupCandidates(root, version, id, proc)
	usageFile := "memory.usage_in_bytes"
	if version == 2 {
		usageFile = "memory.current"
	}
	r := &cgroupReader{version: version}
	for _, d := range memC {
		if _, err := os.Stat(filepath.Join(d, usageFile)); err == nil {
			r.memDir = d
			break
		}
	}
	if r.memDir == "" {
		return nil, fmt.Errorf("no readable cgroup for container %.12s under %s (tried %s)", id, root, strings.Join(memC, ", "))
	}
	for _, d := range cpuC {
		if _, err := os.Stat(d); err == nil {
			r.cpuDir = d
			break
		}
	}
	for _, d := range throttleCandidates(root, version, id, proc) {
		if _, err := os.Stat(filepath.Join(d, "cpu.stat")); err == nil {
			r.throttleDir = d
			break
		}
	}
	return r, nil
}

func (r *cgroupReader) read() (memReading, error) {
	var m memReading
	usage, stat, oom, cpu := "memory.usage_in_bytes", "memory.stat", "memory.oom_control", "cpuacct.usage"
	inactive, majfault := "total_inactive_file", "total_pgmajfault"
	if r.version == 2 {
		usage, oom, cpu, inactive, majfault = "memory.current", "memory.events", "cpu.stat", "inactive_file", "pgmajfault"
	}
	b, err := r.file(filepath.Join(r.memDir, usage))
	if err != nil {
		return m, err
	}
	if m.usage, err = parseCgroupInt(b); err != nil {
		return m, err
	}
	// The rest is best effort: a missing file leaves its figure at zero.
	if b, err := r.file(filepath.Join(r.memDir, stat)); err == nil {
		m.inactiveFile, _ = flatKeyed(b, inactive)
		m.majorFaults, _ = flatKeyed(b, majfault)
	}
	if b, err := r.file(filepath.Join(r.memDir, oom)); err == nil {
		k, _ := flatKeyed(b, "oom_kill")
		m.oomKills = int(k)
	}
	if r.cpuDir == "" {
		return m, nil
	}
	if b, err := r.file(filepath.Join(r.cpuDir, cpu)); err == nil {
		if r.version == 2 {
			m.cpu = parseCPUStat(b, 2)
			return m, nil
		}
		m.cpu.UsageNanos, _ = parseCgroupInt(b)
	}
	if r.throttleDir != "" {
		if b, err := r.file(filepath.Join(r.throttleDir, "cpu.stat")); err == nil {
			usage := m.cpu.UsageNanos
			m.cpu = parseCPUStat(b, 1)
			m.cpu.UsageNanos = usage
		}
	}
	return m, nil
}

// oomKills reads the kill counter afresh; safe beside the sampler, whose
// kept-open files it does not touch.
func (r *cgroupReader) oomKills() (int, error) {
	name := "memory.oom_control"
	if r.version == 2 {
		name = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(r.memDir, name))
	if err != nil {
		return 0, err
	}
	k, _ := flatKeyed(b, "oom_kill")
	return int(k), nil
}

// cpuUse reads the cumulative CPU counters afresh; like oomKills, safe
// beside the sampler. False when no CPU accounting could be read.
func (r *cgroupReader) cpuUse() (model.CPUUse, bool) {
	var c model.CPUUse
	if r.cpuDir == "" {
		return c, false
	}
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.cpuDir, "cpu.stat"))
		if err != nil {
			return c, false
		}
		return parseCPUStat(b, 2), true
	}
	usage, err := readInt(filepath.Join(r.cpuDir, "cpuacct.usage"))
	if err != nil {
		return c, false
	}
	if r.throttleDir != "" {
		if b, err := os.ReadFile(filepath.Join(r.throttleDir, "cpu.stat")); err == nil {
			c = parseCPUStat(b, 1)
		}
	}
	c.UsageNanos = usage
	return c, true
}

// takePeak returns the kernel's peak usage and, on v1, resets it so the
// next reading covers only what follows (v2's memory.peak cannot be reset
// on every kernel; there it is the peak so far).
func (r *cgroupReader) takePeak() (int64, bool) {
	name := "memory.max_usage_in_bytes"
	if r.version == 2 {
		name = "memory.peak"
	}
	p := filepath.Join(r.memDir, name)
	v, err := readInt(p)
	if err != nil {
		return 0, false
	}
	if r.version == 1 {
		_ = os.WriteFile(p, []byte("0"), 0)
	}
	return v, true
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseCgroupInt(b)
}

// parseCgroupInt reads a single-value cgroup file; "max" is -1.
func parseCgroupInt(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("not a cgroup integer: %q", s)
	}
	return v, nil
}

// flatKeyed finds key in a "key value" per line file (memory.stat,
// memory.events, memory.oom_control, cpu.stat).
func flatKeyed(data []byte, key string) (int64, bool) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		k, v, ok := bytes.Cut(line, []byte{' '})
		if !ok || string(k) != key {
			continue
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
