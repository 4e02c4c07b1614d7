package workload

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Harbor runs its oracle as `set -o pipefail; bash solve.sh 2>&1 | tee
// /logs/agent/oracle.txt`: the exec lasts until the tee reads the end of
// its input, so a job solve.sh left in the background with its output
// open (`(sleep 3; make report) &`, `nohup ./gen.sh &`) is waited for, to
// the agent's timeout, and what it writes before then is there when the
// verifier looks. The step driver ended such a step 300 ms after solve.sh
// had (DrainQuiet), and a report a job wrote seconds later was missing:
// the task failed where Harbor passes it (the eighteenth attacker's 2).
//
// A step with an OutputFile (the tee's file) is held the same way
// (outputHold): once its process has ended, the driver waits while any
// other process holds the step's output pipe. The end of the pipe cannot
// say it: every process the traced script starts also holds the pipe as
// its trace descriptor (Command.TraceFD), which Harbor's would not hold
// (`nohup cmd > log 2>&1 &` holds no output of Harbor's), so the driver
// reads who holds it, and as what, in /proc. It waits to the step's
// timeout at most: headroom then ends the hold (OpRelease), and leaves
// those processes running, as Harbor leaves them when it cancels its
// exec.

// OpRelease, on the driver's stdin while a step is held (Command.Held),
// ends the hold of the step whose End it names; anywhere else it is
// ignored. It writes no end marker of its own.
const OpRelease = "release"

// ReleaseReadings is how many readings in a row must find no holder before
// a hold ends, the driver's and headroom's from the host alike: a holder
// that forks and ends hands the output on between two of them.
const ReleaseReadings = 2

// A hold reads who holds the step's output every holdPoll at first, less
// often as it lasts, up to every holdPollMax: a server held to a 30-minute
// timeout costs a few reads a second.
const (
	holdPoll    = 25 * time.Millisecond
	holdPollMax = 250 * time.Millisecond
)

// inbox is the driver's stdin, read ahead of the command that runs, so
// that a held step can take its OpRelease; lines read during a hold that
// are not its release wait in pending.
type inbox struct {
	lines   chan []byte
	pending [][]byte
}

// newInbox reads in, line by line, until it ends (its channel closes).
func newInbox(in io.Reader) *inbox {
	ib := &inbox{lines: make(chan []byte)}
	go func() {
		defer close(ib.lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			ib.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	return ib
}

// next is the next line (false: stdin has ended).
func (ib *inbox) next() ([]byte, bool) {
	if len(ib.pending) > 0 {
		line := ib.pending[0]
		ib.pending = ib.pending[1:]
		return line, true
	}
	line, ok := <-ib.lines
	return line, ok
}

// outputHold holds a step, once its process has ended, while another
// process holds its output pipe other than as the trace's descriptor.
type outputHold struct {
	in      *inbox // where OpRelease comes (nil: only the holders end it)
	end     string // the step's End, which its OpRelease names
	traceFD int    // a descriptor that holds nothing of the step's output
	self    int
	pipe    string // the pipe as /proc names it: "pipe:[inode]"
	// held is said once, when the hold begins (Command.Held).
	held func()
}

// newOutputHold is the hold of c's output (nil: c has no OutputFile).
func newOutputHold(c Command, in *inbox, held func()) *outputHold {
	if c.OutputFile == "" {
		return nil
	}
	return &outputHold{in: in, end: c.End, traceFD: c.TraceFD, self: os.Getpid(), held: held}
}

// attach names the pipe the step writes its output to.
func (h *outputHold) attach(pw *os.File) {
	if h == nil {
		return
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(pw.Fd()), &st); err == nil {
		h.pipe = fmt.Sprintf("pipe:[%d]", st.Ino)
	}
}

// wait returns once no other process has held the step's output for
// ReleaseReadings readings in a row, or the hold is released, or stdin
// ends (headroom gone).
func (h *outputHold) wait() {
	if h == nil || h.pipe == "" {
		return
	}
	said, clear := false, 0
	poll := holdPoll
	tick := time.NewTimer(poll)
	defer tick.Stop()
	for {
		if h.holding() {
			clear = 0
			if !said {
				said = true
				if h.held != nil {
					h.held()
				}
			}
		} else if clear++; clear >= ReleaseReadings {
			return
		}
		var lines <-chan []byte
		if h.in != nil {
			lines = h.in.lines
		}
		select {
		case <-tick.C:
			poll = min(poll*2, holdPollMax)
			tick.Reset(poll)
		case line, ok := <-lines:
			if !ok {
				return
			}
			var c Command
			if json.Unmarshal(line, &c) == nil && c.Op == OpRelease && c.End == h.end {
				return
			}
			h.in.pending = append(h.in.pending, line)
		}
	}
}

// holding says whether a process other than the driver holds the pipe as
// a descriptor other than the trace's. A process whose descriptors cannot
// be read (another user's, where the driver may not take its identity;
// one not dumpable) counts as not holding: the step then ends as it did.
func (h *outputHold) holding() bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	var pids []int
	for _, p := range procs {
		if pid, err := strconv.Atoi(p.Name()); err == nil && pid != h.self {
			pids = append(pids, pid)
		}
	}
	return PipeHeld(pids, h.pipe, h.traceFD)
}

// PipeHeld says whether one of pids holds pipe (as /proc names it,
// "pipe:[inode]") as a descriptor other than skipFD (0: none skipped):
// headroom's reading, from the host, of who holds an exec'd step's
// output (outputHold's, in the container, for the step driver).
func PipeHeld(pids []int, pipe string, skipFD int) bool {
	skip := ""
	if skipFD > 0 {
		skip = strconv.Itoa(skipFD)
	}
	for _, pid := range pids {
		if holds(pid, pipe, skip) {
			return true
		}
	}
	return false
}

// holds reads pid's descriptors: as itself, or, where that is refused and
// this process is root, as pid's owner (asOwnerOf).
func holds(pid int, pipe, skip string) bool {
	yes, err := fdsHold(pid, pipe, skip)
	if errors.Is(err, os.ErrPermission) && os.Geteuid() == 0 {
		uid, gid, ok := ownerOf(pid)
		if ok {
			asOwnerOf(uid, gid, func() { yes, _ = fdsHold(pid, pipe, skip) })
		}
	}
	return yes
}

// fdsHold reads pid's descriptors for the pipe.
func fdsHold(pid int, pipe, skip string) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	var denied error
	for _, fd := range fds {
		if fd.Name() == skip {
			continue
		}
		target, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				denied = err
			}
			continue
		}
		if target == pipe {
			return true, nil
		}
	}
	return false, denied
}

// ownerOf is pid's real user and group, from its status.
func ownerOf(pid int) (uid, gid int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	uid, gid = -1, -1
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, found := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !found || len(fields) == 0 {
			continue
		}
		switch name {
		case "Uid":
			uid, _ = strconv.Atoi(fields[0])
		case "Gid":
			gid, _ = strconv.Atoi(fields[0])
		}
	}
	return uid, gid, uid > 0 && gid >= 0
}

// asOwnerOf runs f on a thread of its own whose filesystem identity is
// uid and gid: the kernel lets a process read another's descriptors when
// its filesystem identity is the other's, and root in a container has no
// CAP_SYS_PTRACE to read them as root. The thread is never given back to
// the runtime (it ends with its goroutine), so no other code runs under
// that identity.
func asOwnerOf(uid, gid int, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		unix.Setfsgid(gid)
		unix.Setfsuid(uid)
		f()
	}()
	<-done
}
