// Package cgroup reads a Linux control group's memory and CPU files (v1
// and v2): a container's from the host (the Docker backend) or a
// process's own from inside its container (the in-pod probe of the
// Kubernetes backend).
package cgroup

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

// Reader reads one container's memory and CPU from its cgroup files.
// The files stay open and are re-read from offset 0 (the kernel regenerates
// them on every read): at 20 Hz per trial, open and close would double the
// system calls.
type Reader struct {
	version int    // 1 or 2
	memDir  string // v1: memory controller dir; v2: the unified dir
	cpuDir  string // v1: cpuacct dir; v2: the unified dir
	// throttleDir holds cpu.stat's CFS counters: v1's cpu controller
	// (which may be mounted apart from cpuacct); v2: the unified dir.
	throttleDir string

	kept KeptFiles
	// peak is the kernel's high-water mark, read and reset at every
	// reading (peak.go); nil where it cannot be reset.
	peak *peakMark
}

// KeptFiles are kernel-made files (cgroup, /proc) kept open and re-read
// from offset 0: one pread per reading instead of open, read and close.
// One reader at a time: the bytes a read returns are the shared buffer's
// until the next read. Not for a v1 cgroup.procs: re-read on an open
// handle, it answers from the list it made at the first read.
type KeptFiles struct {
	files map[string]*cgFile
	buf   []byte
}

// File reads one file through its kept-open handle.
func (k *KeptFiles) File(path string) ([]byte, error) {
	if k.files == nil {
		k.files = map[string]*cgFile{}
	}
	f, ok := k.files[path]
	if !ok {
		var err error
		if f, err = openCgFile(path); err != nil {
			return nil, err
		}
		k.files[path] = f
	}
	if k.buf == nil {
		k.buf = make([]byte, 8192)
	}
	for {
		n, err := f.readAt0(k.buf)
		if err != nil {
			return nil, err
		}
		if n < len(k.buf) {
			return k.buf[:n], nil
		}
		k.buf = make([]byte, 2*len(k.buf))
	}
}

// Forget closes one kept file; the next read opens it afresh.
func (k *KeptFiles) Forget(path string) {
	if f, ok := k.files[path]; ok {
		f.close()
		delete(k.files, path)
	}
}

// Paths lists the files kept open.
func (k *KeptFiles) Paths() []string {
	var out []string
	for p := range k.files {
		out = append(out, p)
	}
	return out
}

// Close releases the kept-open files.
func (k *KeptFiles) Close() {
	for _, f := range k.files {
		f.close()
	}
	k.files = nil
}

// file reads one cgroup file through its kept-open handle.
func (r *Reader) file(path string) ([]byte, error) { return r.kept.File(path) }

// Close releases the kept-open files.
func (r *Reader) Close() {
	r.kept.Close()
	if r.peak != nil {
		r.peak.close()
	}
}

// Reading is one read of the memory files.
type Reading struct {
	Usage, InactiveFile int64
	// PeakBytes is the kernel's high-water mark since the previous
	// reading (PeakReset), 0 where it cannot be reset (PeakSamples).
	PeakBytes int64
	// StepPeakBytes is the part of PeakBytes since the later of the
	// previous reading and the last TakePeak: the step running now's own
	// (PeakBytes also holds what the last TakePeak took, the step before's).
	StepPeakBytes int64
	MajorFaults   int64 // cumulative pgmajfault
	// Shmem is the cgroup's tmpfs pages (a /dev/shm, any tmpfs): part
	// of Usage no process's resident set counts.
	Shmem    int64
	OOMKills int          // the cgroup's oom_kill counter
	CPU      model.CPUUse // cumulative
}

// Version tells v1 from v2 by the unified hierarchy's root file.
func Version(root string) int {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return 2
	}
	return 1
}

// ProcPaths parses /proc/<pid>/cgroup into controller → path ("" is
// the v2 unified entry).
func ProcPaths(data []byte) map[string]string {
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

// candidates lists where a container's cgroup may live, for the
// cgroupfs and systemd drivers, plus what /proc/<pid>/cgroup says (which
// also covers a custom --cgroup-parent).
func candidates(root string, version int, id string, proc map[string]string) (mem, cpu []string) {
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

// Find locates a running container's cgroup files from the host, under
// the Docker engine's cgroupfs and systemd layouts; pid is the
// container's init process on this host (0 when unknown).
func Find(root, id string, pid int) (*Reader, error) {
	version := Version(root)
	proc := map[string]string{}
	if pid > 0 {
		if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid)); err == nil {
			proc = ProcPaths(data)
		}
	}
	memC, cpuC := candidates(root, version, id, proc)
	r, err := open(version, memC, cpuC, throttleCandidates(root, version, id, proc))
	if err != nil {
		return nil, fmt.Errorf("no readable cgroup for container %.12s under %s (tried %s)", id, root, strings.Join(memC, ", "))
	}
	return r, nil
}

// Self locates the calling process's own cgroup, as a process inside a
// container sees it: root joined with the path /proc/self/cgroup names
// (no cgroup namespace, the host's hierarchy mounted whole), else root
// itself (a cgroup namespace, or v1's per-controller bind mounts of the
// container's own directory, where /proc/self/cgroup still names the
// host's path).
func Self(root string) (*Reader, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	return selfFrom(root, ProcPaths(data))
}

func selfFrom(root string, proc map[string]string) (*Reader, error) {
	version := Version(root)
	dirs := func(ctrl string, bases ...string) []string {
		var out []string
		for _, b := range bases {
			if p, ok := proc[ctrl]; ok && p != "/" {
				out = append(out, filepath.Join(b, p))
			}
		}
		return append(out, bases...)
	}
	var mem, cpu, throttle []string
	if version == 2 {
		mem = dirs("", root)
		cpu, throttle = mem, mem
	} else {
		mem = dirs("memory", filepath.Join(root, "memory"))
		cpu = dirs("cpuacct", filepath.Join(root, "cpuacct"), filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "cpuacct,cpu"))
		throttle = dirs("cpu", filepath.Join(root, "cpu"), filepath.Join(root, "cpu,cpuacct"), filepath.Join(root, "cpuacct,cpu"))
	}
	r, err := open(version, mem, cpu, throttle)
	if err != nil {
		return nil, fmt.Errorf("no readable cgroup of this process under %s (tried %s)", root, strings.Join(mem, ", "))
	}
	return r, nil
}

// open takes the first directory of each list that has the files read
// from it; without a memory directory there is nothing to read.
func open(version int, mem, cpu, throttle []string) (*Reader, error) {
	usageFile := "memory.usage_in_bytes"
	if version == 2 {
		usageFile = "memory.current"
	}
	r := &Reader{version: version}
	for _, d := range mem {
		if _, err := os.Stat(filepath.Join(d, usageFile)); err == nil {
			r.memDir = d
			break
		}
	}
	if r.memDir == "" {
		return nil, os.ErrNotExist
	}
	r.peak = openPeak(version, r.memDir)
	for _, d := range cpu {
		if _, err := os.Stat(d); err == nil {
			r.cpuDir = d
			break
		}
	}
	for _, d := range throttle {
		if _, err := os.Stat(filepath.Join(d, "cpu.stat")); err == nil {
			r.throttleDir = d
			break
		}
	}
	return r, nil
}

// Version is the cgroup version read (1 or 2).
func (r *Reader) Version() int { return r.version }

// Dir is the cgroup's memory directory (v2: its one directory), where
// cgroup.procs lists its processes.
func (r *Reader) Dir() string { return r.memDir }

// PidsFile is the cgroup's pids.current (the pids controller's count of
// its tasks, threads included), "" where there is none: v2's unified
// directory, or v1's pids hierarchy beside the memory one.
func (r *Reader) PidsFile() string {
	dir := r.memDir
	if r.version == 1 {
		i := strings.Index(dir, string(filepath.Separator)+"memory"+string(filepath.Separator))
		if i < 0 {
			return ""
		}
		dir = dir[:i] + string(filepath.Separator) + "pids" + dir[i+len("/memory"):]
	}
	path := filepath.Join(dir, "pids.current")
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// Read reads usage, memory.stat, the kill counter and CPU accounting
// through the kept-open files: the sampler's one call per tick (not safe
// to call concurrently).
func (r *Reader) Read() (Reading, error) {
	var m Reading
	usage, stat, oom, cpu := "memory.usage_in_bytes", "memory.stat", "memory.oom_control", "cpuacct.usage"
	inactive, majfault, shmem := "total_inactive_file", "total_pgmajfault", "total_shmem"
	if r.version == 2 {
		usage, oom, cpu, inactive, majfault, shmem = "memory.current", "memory.events", "cpu.stat", "inactive_file", "pgmajfault", "shmem"
	}
	b, err := r.file(filepath.Join(r.memDir, usage))
	if err != nil {
		return m, err
	}
	if m.Usage, err = ParseInt(b); err != nil {
		return m, err
	}
	if r.peak != nil {
		interval, own := r.peak.sample()
		m.PeakBytes, m.StepPeakBytes = max(interval, m.Usage), max(own, m.Usage)
	}
	// The rest is best effort: a missing file leaves its figure at zero.
	if b, err := r.file(filepath.Join(r.memDir, stat)); err == nil {
		m.InactiveFile, _ = FlatKeyed(b, inactive)
		m.MajorFaults, _ = FlatKeyed(b, majfault)
		m.Shmem, _ = FlatKeyed(b, shmem)
	}
	if b, err := r.file(filepath.Join(r.memDir, oom)); err == nil {
		k, _ := FlatKeyed(b, "oom_kill")
		m.OOMKills = int(k)
	}
	if r.cpuDir == "" {
		return m, nil
	}
	if b, err := r.file(filepath.Join(r.cpuDir, cpu)); err == nil {
		if r.version == 2 {
			m.CPU = ParseCPUStat(b, 2)
			return m, nil
		}
		m.CPU.UsageNanos, _ = ParseInt(b)
	}
	if r.throttleDir != "" {
		if b, err := r.file(filepath.Join(r.throttleDir, "cpu.stat")); err == nil {
			usage := m.CPU.UsageNanos
			m.CPU = ParseCPUStat(b, 1)
			m.CPU.UsageNanos = usage
		}
	}
	return m, nil
}

// Usage reads the memory usage afresh (memory.usage_in_bytes /
// memory.current); like OOMKills, safe beside the sampler.
func (r *Reader) Usage() (int64, error) {
	name := "memory.usage_in_bytes"
	if r.version == 2 {
		name = "memory.current"
	}
	return readInt(filepath.Join(r.memDir, name))
}

// OOMKills reads the kill counter afresh; safe beside the sampler, whose
// kept-open files it does not touch.
func (r *Reader) OOMKills() (int, error) {
	name := "memory.oom_control"
	if r.version == 2 {
		name = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(r.memDir, name))
	if err != nil {
		return 0, err
	}
	k, _ := FlatKeyed(b, "oom_kill")
	return int(k), nil
}

// CPUUse reads the cumulative CPU counters afresh; like oomKills, safe
// beside the sampler. False when no CPU accounting could be read.
func (r *Reader) CPUUse() (model.CPUUse, bool) {
	var c model.CPUUse
	if r.cpuDir == "" {
		return c, false
	}
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.cpuDir, "cpu.stat"))
		if err != nil {
			return c, false
		}
		return ParseCPUStat(b, 2), true
	}
	usage, err := readInt(filepath.Join(r.cpuDir, "cpuacct.usage"))
	if err != nil {
		return c, false
	}
	if r.throttleDir != "" {
		if b, err := os.ReadFile(filepath.Join(r.throttleDir, "cpu.stat")); err == nil {
			c = ParseCPUStat(b, 1)
		}
	}
	c.UsageNanos = usage
	return c, true
}

// TakePeak returns the kernel's peak usage since the last TakePeak and
// starts again: with a resettable mark (PeakReset), the largest of the
// readings' marks and the mark now; else, on v1, the mark reset (v2's
// memory.peak, where it cannot be reset, is the peak so far).
func (r *Reader) TakePeak() (int64, bool) {
	if r.peak != nil {
		return r.peak.step()
	}
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
	return ParseInt(b)
}

// ParseInt reads a single-value cgroup file; "max" is -1.
func ParseInt(b []byte) (int64, error) {
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

// FlatKeyed finds key in a "key value" per line file (memory.stat,
// memory.events, memory.oom_control, cpu.stat).
func FlatKeyed(data []byte, key string) (int64, bool) {
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
