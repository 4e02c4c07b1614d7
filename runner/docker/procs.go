package docker

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/runner"
	"golang.org/x/sys/unix"
)

// The process watch: the container's processes read from the host (the
// cgroup's process list and /proc) with no tool in the container, or,
// where /proc cannot be read (a remote engine), the engine's top.
const (
	procEvery = 100 * time.Millisecond // /proc: 10 Hz
	// The cgroup's process list (readProcs): at most every listEvery
	// without a task count to check it against, at least every
	// listCheckEvery with one.
	listEvery      = 200 * time.Millisecond
	listCheckEvery = time.Second
	topEvery       = 500 * time.Millisecond // the engine's top: an API call each
	maxProcsRead   = 256                    // per sample; the rest are counted
	clockTicks     = 100                    // USER_HZ on Linux
)

// procWatch is a sandbox's process watch.
type procWatch struct {
	source string
	ch     chan runner.ProcSample
	cmds   map[procID]procCmd // command lines by process, read once per exec
	// roles are what a process was once known to be by its pid (the
	// driver, the step's process): it stays that process to its end,
	// after the driver has moved on to the next command too, so a list
	// read in the step's last moments does not name it by its argv.
	roles map[procID]string
	// files are each live process's stat, kept open: with 32
	// trials at 10 Hz, opening and closing them was most of the console's
	// own CPU (docs/PERFORMANCE.md).
	files cgroup.KeptFiles

	// The list (readProcs): the processes last listed, when, how many
	// were beyond the cap, the buffer it is read into, and the cgroup's
	// count of tasks ("" without a pids controller).
	pids      []int
	ticks     map[int]int64 // each listed process's start time
	listedAt  time.Time
	truncated int
	listBuf   []byte
	pidsFile  string
	// initSession is the session of the container's first process (its
	// pid 1 in the container), once read: the entrypoint's.
	initSession int
}

// procCmd is a command line read for a process and the name it had then:
// an exec changes the name (the engine's `runc init` becomes the step).
type procCmd struct {
	comm, cmd string
	nspid     int // its pid in the container (/proc/<pid>/status NSpid's last)
}

type procID struct {
	pid   int
	ticks int64
}

func (s *sandbox) Processes() <-chan runner.ProcSample { return s.pw.ch }
func (s *sandbox) ProcessSource() string               { return s.pw.source }

// bootTime is when the kernel booted on the wall clock, which a
// process's start (clock ticks of CLOCK_BOOTTIME in /proc/<pid>/stat) is
// counted from: the wall clock less CLOCK_BOOTTIME, exact to a
// microsecond; /proc/stat's btime (whole seconds, so every start read up
// to a second early: a child of the agent's step read as born in the step
// before) only where that clock cannot be read.
var bootTime = sync.OnceValue(func() time.Time {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err == nil {
		return time.Now().Round(0).Add(-time.Duration(ts.Nano()))
	}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
})

// startProcs starts the watch: /proc where the cgroup is readable, else
// the engine's top; it ends when the sandbox is removed.
func (s *sandbox) startProcs() {
	s.pw.ch = make(chan runner.ProcSample, 4)
	s.pw.cmds, s.pw.roles = map[procID]procCmd{}, map[procID]string{}
	s.pw.ticks = map[int]int64{}
	if s.cg != nil && !bootTime().IsZero() {
		if _, err := os.ReadFile(filepath.Join(s.cg.Dir(), "cgroup.procs")); err == nil {
			s.pw.source = "proc"
			s.pw.pidsFile = s.cg.PidsFile()
			s.b.procs.add(s)
			return
		}
	}
	s.pw.source = "top"
	go s.watch(topEvery, s.readTop)
}

// procTick is the /proc watch's reading on the backend's shared tick;
// false when the cgroup has gone.
func (s *sandbox) procTick(now time.Time) bool {
	if s.drv != nil && s.drv.pidPending(now) {
		return true // a step just sent: its pid comes within milliseconds, the next tick names it
	}
	ps, ok := s.readProcs(now)
	if !ok {
		return false
	}
	select {
	case s.pw.ch <- ps:
	default: // the runner is behind: this sample is skipped
	}
	return true
}

// stopProcs ends the /proc watch (Remove): no sample is sent after it.
func (s *sandbox) stopProcs() {
	if s.pw.source != "proc" {
		return // none, or the engine's top, which ends with quit
	}
	s.b.procs.remove(s)
	s.pw.files.Close()
	close(s.pw.ch)
}

func (s *sandbox) watch(every time.Duration, read func(time.Time) (runner.ProcSample, bool)) {
	defer close(s.pw.ch)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case now := <-tick.C:
			ps, ok := read(now)
			if !ok {
				continue
			}
			select {
			case s.pw.ch <- ps:
			case <-s.quit:
				return
			default: // the runner is behind: this sample is skipped
			}
		}
	}
}

// readProcs reads the cgroup's processes and each one's /proc files.
//
// The list itself is read only when it may have changed: cgroup v1
// answers a kept cgroup.procs from its first list, so each read is an
// open, and at 32 trials × 10 Hz those opens were a quarter of the
// console's CPU (docs/PERFORMANCE.md). Where the cgroup has a pids
// controller, its count of tasks (pids.current, a kept file) equals the
// known processes' threads while no process has joined; a process gone
// fails its own stat. Either change, a truncated list, or a second
// since the last list reads it afresh. Without the count the list is
// read at 5 Hz and the processes' own files at 10 Hz: a process is seen
// at most 200 ms late, and the activities it shows need 200 ms of life
// (runner.ActivityThreshold) in any case.
func (s *sandbox) readProcs(now time.Time) (runner.ProcSample, bool) {
	ps, ok := s.listProcs(now)
	if s.drv == nil {
		// Without the driver every step is an engine exec, a session of
		// its own: the entrypoint's session holds no step's process.
		// With it, steps are PID 1's children, in its session.
		ps.InitSession = s.pw.initSession
	}
	return ps, ok
}

// listProcs is readProcs's list of the cgroup's processes.
func (s *sandbox) listProcs(now time.Time) (runner.ProcSample, bool) {
	w := &s.pw
	// With the step driver, its own process and the step's are known by
	// their pids in the container (readProc's Role).
	ps := runner.ProcSample{Time: now, Roles: s.drv != nil}
	since := now.Sub(w.listedAt)
	relist := w.listedAt.IsZero() || w.truncated > 0 || since >= listCheckEvery ||
		(w.pidsFile == "" && since >= listEvery-procEvery/2)
	if !relist {
		tasks := int64(-1)
		if w.pidsFile != "" {
			if b, err := w.files.File(w.pidsFile); err == nil {
				tasks, _ = cgroup.ParseInt(b)
			}
		}
		threads := int64(0)
		for _, pid := range w.pids {
			p, _, th, ok := s.readProc(pid, now)
			if !ok {
				relist = true // gone: the list says what is left
				break
			}
			threads += th
			ps.Procs = append(ps.Procs, p)
		}
		if !relist && w.pidsFile != "" && tasks != threads {
			relist = true // a process has joined (or the count is unreadable)
		}
		if !relist {
			return ps, true
		}
	}
	read := ps.Procs // this tick's reads of known processes, reused
	ps.Procs = nil
	data, err := cgroup.ReadFresh(filepath.Join(s.cg.Dir(), "cgroup.procs"), &w.listBuf)
	if err != nil {
		return runner.ProcSample{}, false
	}
	w.listedAt = now
	w.pids = w.pids[:0]
	alive := map[procID]bool{}
	for _, f := range bytes.Fields(data) {
		pid, err := strconv.Atoi(string(f))
		if err != nil {
			continue
		}
		if len(ps.Procs) >= maxProcsRead {
			ps.Truncated++
			continue
		}
		var p runner.Proc
		var id procID
		if i := slices.IndexFunc(read, func(r runner.Proc) bool { return r.PID == pid }); i >= 0 {
			p, id = read[i], procID{pid, w.ticks[pid]}
		} else {
			var ok bool
			if p, id, _, ok = s.readProc(pid, now); !ok {
				continue // gone between the list and its files
			}
		}
		alive[id] = true
		w.pids = append(w.pids, pid)
		ps.Procs = append(ps.Procs, p)
	}
	w.truncated = ps.Truncated
	for id := range s.pw.cmds {
		if !alive[id] {
			delete(s.pw.cmds, id)
		}
	}
	for id := range s.pw.roles {
		if !alive[id] {
			delete(s.pw.roles, id)
		}
	}
	live := map[int]bool{}
	for id := range alive {
		live[id.pid] = true
	}
	for pid := range w.ticks {
		if !live[pid] {
			delete(w.ticks, pid)
		}
	}
	for _, path := range s.pw.files.Paths() {
		if pid, ok := procPathPID(path); ok && !live[pid] {
			s.pw.files.Forget(path)
		}
	}
	return ps, true
}

// procPathPID is the process a /proc/<pid>/… path names.
func procPathPID(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return 0, false
	}
	pid, _, _ := strings.Cut(rest, "/")
	n, err := strconv.Atoi(pid)
	return n, err == nil
}

// procFile reads a process's file through a kept handle. A handle whose
// process has gone fails (ESRCH); if the pid was taken again since, the
// file is opened afresh once.
func (s *sandbox) procFile(path string) ([]byte, error) {
	b, err := s.pw.files.File(path)
	if err != nil {
		s.pw.files.Forget(path)
		b, err = s.pw.files.File(path)
		if err != nil {
			s.pw.files.Forget(path)
		}
	}
	return b, err
}

// readProc reads one process: what the watch shows of it, who it is
// (pid and start time), and its threads (for the task count).
func (s *sandbox) readProc(pid int, now time.Time) (runner.Proc, procID, int64, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := s.procFile(dir + "/stat")
	if err != nil {
		return runner.Proc{}, procID{}, 0, false
	}
	st, ok := parseProcStat(stat)
	if !ok {
		return runner.Proc{}, procID{}, 0, false
	}
	if s.pw.ticks != nil {
		if t, seen := s.pw.ticks[pid]; seen && t != st.ticks {
			// The pid was taken again since the list: not the process listed.
			s.pw.listedAt = time.Time{}
		}
		s.pw.ticks[pid] = st.ticks
	}
	comm, ticks := st.comm, st.ticks
	p := runner.Proc{PID: pid, PPID: st.ppid, Session: st.session, Started: bootTime().Add(time.Duration(ticks) * time.Second / clockTicks), RSSBytes: st.rssPages * int64(os.Getpagesize())}
	id := procID{pid, ticks}
	c, ok := s.pw.cmds[id]
	cmd, ns := c.cmd, c.nspid
	if !ok || c.comm != comm {
		ns = nsPID(dir)
		var read bool
		cmd, read = readCmdline(dir, comm)
		// A process that has just forked still shows its parent's
		// command line, under its parent's name, until it execs; and an
		// exec that keeps the name (the step driver's fork becoming
		// `hr-workload run --step …`) is not seen by the name: such a
		// line is read again at every tick until it is the process's own.
		// So is none at all: read mid-exec (the container's PID 1, runc
		// init becoming the driver, was kept as [hr-workload], and then
		// its forks could not be told from it).
		p.Forked = s.sameAsParent(st.ppid, comm, cmd)
		if read && !p.Forked && now.Sub(p.Started) > 50*time.Millisecond {
			s.pw.cmds[id] = procCmd{comm, cmd, ns}
		}
	}
	p.Command = cmd
	if ns == 1 {
		s.pw.initSession = st.session
	}
	if s.drv != nil {
		// The driver is the container's PID 1; the step, the pid the
		// driver said it started the running command as.
		switch step := s.drv.runningPID(); {
		case ns == 1:
			p.Role = runner.RoleDriver
		case ns != 0 && ns == step:
			p.Role = runner.RoleStep
		case step == 0 && ns > 1 && sameArgv(cmd, s.drv.pendingArgv()) && nsPID("/proc/"+strconv.Itoa(st.ppid)) == 1:
			// The command in flight, read before the driver said its
			// pid: the driver's child with the command's own line.
			p.Role = runner.RoleStep
		}
		if s.pw.roles != nil {
			if p.Role != "" {
				s.pw.roles[id] = p.Role
			} else {
				p.Role = s.pw.roles[id]
			}
		}
	}
	return p, id, st.threads, true
}

// maxCmdline is how much of a process's command line is read: more
// than the record keeps (512 bytes, after masking secrets, which may
// shorten it) and than headroom's own wrappers it must know (the trace
// wrapper's ~500 bytes), far less than the kernel allows (a task's 200
// processes of 1.8 MB command lines held headroom at 639 MB when each was
// read, and kept, whole).
const maxCmdline = 4096

// cmdlineMark ends a command line read in part (runner's clip mark: a
// secret's start before it is masked as the whole secret would be).
const cmdlineMark = "…"

// readCmdline is a process's command line on one line, or its name in
// brackets when it has none (a kernel thread, a zombie, mid-exec); read
// says it had one. At most maxCmdline bytes are read: a longer line is
// those, then cmdlineMark.
func readCmdline(dir, comm string) (cmd string, read bool) {
	raw, cut, err := readAtMost(dir+"/cmdline", maxCmdline)
	if err != nil || len(raw) == 0 {
		return "[" + comm + "]", false
	}
	if cut {
		return strings.TrimLeftFunc(strings.ReplaceAll(string(raw), "\x00", " "), unicode.IsSpace) + cmdlineMark, true
	}
	return strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(raw, "\x00")), "\x00", " ")), true
}

// sameArgv says whether cmd, a command line readCmdline read, is argv
// (its words joined by spaces): the line itself or, read in part, its
// start.
func sameArgv(cmd, argv string) bool {
	if cmd == "" || argv == "" {
		return false
	}
	if cmd == argv {
		return true
	}
	body, cut := strings.CutSuffix(cmd, cmdlineMark)
	return cut && len(argv) > maxCmdline && len(body) > 0 && strings.HasPrefix(strings.TrimLeftFunc(argv, unicode.IsSpace), body)
}

// readAtMost reads up to n bytes of a file; cut says it held more.
func readAtMost(path string, n int) (b []byte, cut bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, int64(n)+1))
	if len(b) > n {
		return b[:n], true, err
	}
	return b, false, err
}

// sameAsParent says whether a process's name and command line are its
// parent's: it was read between its fork and its exec (or is a fork of
// the same program that does not exec, a shell's subshell). The parent's
// are the watch's own reading of it where it has one.
func (s *sandbox) sameAsParent(ppid int, comm, cmd string) bool {
	if ppid <= 0 {
		return false
	}
	if t, ok := s.pw.ticks[ppid]; ok {
		if c, ok := s.pw.cmds[procID{ppid, t}]; ok {
			return c.comm == comm && c.cmd == cmd
		}
	}
	dir := "/proc/" + strconv.Itoa(ppid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return false
	}
	st, ok := parseProcStat(stat)
	if !ok || st.comm != comm {
		return false
	}
	pcmd, _ := readCmdline(dir, st.comm)
	return pcmd == cmd
}

// nsPID is a process's pid in its innermost pid namespace (the
// container's), from /proc/<pid>/status; 0 when it cannot be read. The
// file is read a piece at a time, in 4 KiB: a process with 65,536
// supplementary groups (a task's root may set them) has a Groups line of
// 380 KB before NSpid, read whole for every process it forks.
func nsPID(dir string) int {
	f, err := os.Open(dir + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	start := true // at the start of a line
	for {
		line, more, err := r.ReadLine()
		if err != nil {
			return 0
		}
		if rest, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok && start && !more {
			fields := strings.Fields(string(rest))
			if len(fields) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(fields[len(fields)-1])
			return n
		}
		start = !more
	}
}

// parseProcStat reads /proc/<pid>/stat's command name, parent, start
// time (clock ticks since boot) and resident set (pages: the same count
// statm's second field gives, so one file is read per process). The name
// is in parentheses and may hold spaces and parentheses itself, so the
// fields are counted from the last ')'.
func parseProcStat(b []byte) (st procStat, ok bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	st.comm = string(b[open+1 : end])
	f := bytes.Fields(b[end+1:])
	// f[0] is the state (field 3); ppid is field 4, session field 6,
	// starttime field 22, rss field 24.
	if len(f) < 22 {
		return procStat{}, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	ticks, err2 := strconv.ParseInt(string(f[19]), 10, 64)
	rss, err3 := strconv.ParseInt(string(f[21]), 10, 64)
	threads, err4 := strconv.ParseInt(string(f[17]), 10, 64)
	sid, err5 := strconv.Atoi(string(f[3]))
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return procStat{}, false
	}
	st.ppid, st.ticks, st.rssPages, st.threads, st.session = pp, ticks, rss, threads, sid
	return st, true
}

// procStat is what the process watch reads from /proc/<pid>/stat.
type procStat struct {
	comm     string
	ppid     int
	ticks    int64 // start time, clock ticks since boot
	rssPages int64
	threads  int64 // num_threads, field 20
	session  int   // session id, field 6
}

// topArgs are the engine's top's ps options: pid, parent, resident set
// and command line, each line cut at maxCmdline bytes and a little where
// the ps takes --cols (procps'): a command line is otherwise whole, up to
// 128 KiB a process from procps, and all of them are in the engine's
// answer, read at every tick.
func topArgs(cols bool) []string {
	args := []string{"-o", "pid,ppid,rss,args"}
	if cols {
		args = append(args, "--cols", strconv.Itoa(maxCmdline+64))
	}
	return args
}

// readTop asks the engine for the container's processes (its top runs ps
// on the engine's host): coarser, and without start times.
func (s *sandbox) readTop(now time.Time) (runner.ProcSample, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	top, err := s.b.cli.ContainerTop(ctx, s.id, topArgs(!s.b.noTopCols.Load()))
	if err != nil && !s.b.noTopCols.Load() && ctx.Err() == nil {
		if top, err = s.b.cli.ContainerTop(ctx, s.id, topArgs(false)); err == nil {
			s.b.noTopCols.Store(true)
		}
	}
	if err != nil {
		return runner.ProcSample{}, false
	}
	col := map[string]int{}
	for i, t := range top.Titles {
		col[strings.ToUpper(t)] = i
	}
	ip, ipp, irss, iargs := col["PID"], col["PPID"], col["RSS"], col["COMMAND"]
	if _, ok := col["COMMAND"]; !ok {
		iargs = len(top.Titles) - 1
	}
	ps := runner.ProcSample{Time: now}
	for _, row := range top.Processes {
		if len(row) < len(top.Titles) {
			continue
		}
		if len(ps.Procs) >= maxProcsRead {
			ps.Truncated++
			continue
		}
		pid, _ := strconv.Atoi(row[ip])
		ppid, _ := strconv.Atoi(row[ipp])
		rssKiB, _ := strconv.ParseInt(row[irss], 10, 64)
		cmd := row[iargs]
		if len(cmd) > maxCmdline {
			cmd = cmd[:maxCmdline] + cmdlineMark // cut by ps's --cols, or here
		}
		ps.Procs = append(ps.Procs, runner.Proc{PID: pid, PPID: ppid, Command: cmd, RSSBytes: rssKiB * 1024})
	}
	return ps, true
}
