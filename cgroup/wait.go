package cgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// ProcRoot is where the host's /proc is (tests point it elsewhere).
var ProcRoot = "/proc"

// WaitTracker follows how long a container's threads waited for a CPU
// they wanted: the CPU time it did not get, which is the host's doing
// (its own CPU limit shows as throttling instead). v2 says it for the
// whole cgroup (cpu.pressure's some total: time some thread of it was
// runnable and not running); v1 has no such file, so each thread's
// run-queue delay (/proc/<tid>/schedstat) is read as it lives and summed
// over the threads seen: a thread's wait after its last reading is missed.
// At most ThreadsPerRead threads are read a sample: those never read
// first, then the others in turn from where the last sample stopped (a
// thread's delay only grows, so a later reading misses nothing of it
// while it lives; one that ends before its turn keeps its last reading):
// 5,000 idle threads read every second had cost headroom 2.6 s of CPU in
// 26 s.
type WaitTracker struct {
	seen map[int]int64 // v1: each thread's run delay, ns, as last read
	// Skip, on v1, is a process (a host pid) whose threads are not the
	// task's: headroom's step driver, the container's PID 1.
	Skip int
	// list and buf are what the files are read into (ReadFresh: the
	// threads' files are opened once a second each, and os.ReadFile's
	// poller registration and fstat were a tenth of the console's CPU at
	// 32 live trials).
	list, buf []byte
	next      int // v1: where in the tasks list the next sample starts
}

// ThreadsPerRead bounds the schedstat files one v1 sample reads.
const ThreadsPerRead = 256

// Read returns the container's total CPU wait so far, in nanoseconds, and
// whether it could be read at all.
func (w *WaitTracker) Read(r *Reader) (int64, bool) {
	if r.version == 2 {
		b, err := os.ReadFile(filepath.Join(r.memDir, "cpu.pressure"))
		if err != nil {
			return 0, false
		}
		return psiSomeTotal(b) * 1000, true
	}
	b, err := ReadFresh(filepath.Join(r.memDir, "tasks"), &w.list)
	if err != nil {
		return w.sum(), w.seen != nil
	}
	if w.seen == nil {
		w.seen = map[int]int64{}
	}
	var skip map[int]bool
	if w.Skip > 0 {
		skip = map[int]bool{}
		if ents, err := os.ReadDir(filepath.Join(ProcRoot, strconv.Itoa(w.Skip), "task")); err == nil {
			for _, e := range ents {
				if tid, err := strconv.Atoi(e.Name()); err == nil {
					skip[tid] = true
				}
			}
		}
	}
	fields := bytes.Fields(b)
	budget := ThreadsPerRead
	read := func(tid int) {
		budget--
		if d, ok := runDelay(tid, &w.buf); ok && d > w.seen[tid] {
			w.seen[tid] = d
		}
	}
	// Threads never read first: a short-lived one (a build's compilers)
	// would otherwise end before its turn, its wait never counted.
	for _, f := range fields {
		if budget == 0 {
			break
		}
		tid, err := strconv.Atoi(string(f))
		if _, known := w.seen[tid]; err != nil || skip[tid] || known {
			continue
		}
		w.seen[tid] = 0
		read(tid)
	}
	// Then the known ones, in turn from where the last sample stopped.
	if w.next >= len(fields) {
		w.next = 0
	}
	n := 0
	for ; n < len(fields) && budget > 0; n++ {
		tid, err := strconv.Atoi(string(fields[(w.next+n)%len(fields)]))
		if err == nil && !skip[tid] {
			read(tid)
		}
	}
	if len(fields) > 0 {
		w.next = (w.next + n) % len(fields)
	}
	return w.sum(), true
}

func (w *WaitTracker) sum() int64 {
	var n int64
	for _, d := range w.seen {
		n += d
	}
	return n
}

// runDelay is a thread's time waiting on a run queue, in nanoseconds: the
// second field of /proc/<tid>/schedstat.
func runDelay(tid int, buf *[]byte) (int64, bool) {
	b, err := ReadFresh(filepath.Join(ProcRoot, strconv.Itoa(tid), "schedstat"), buf)
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[1]), 10, 64)
	return n, err == nil
}

// psiSomeTotal is the "some" line's total= (microseconds) of a pressure
// file.
func psiSomeTotal(b []byte) int64 {
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || string(fields[0]) != "some" {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				n, _ := strconv.ParseInt(string(v), 10, 64)
				return n
			}
		}
	}
	return 0
}
