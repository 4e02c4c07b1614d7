package docker

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel's log names what the OOM killer killed; the engine does not.
// headroom reads /dev/kmsg where it may (root on the engine's host) and
// matches each kill to its container by the cgroup path in the record.

// kernelKill is one OOM kill as the kernel logged it.
type kernelKill struct {
	containerID string // from task_memcg; empty when not a container's
	process     string
	pid         int
	rssBytes    int64
	// usec is the record's own timestamp: microseconds of the kernel's
	// monotonic clock at the kill.
	usec int64
}

// at is when the kernel killed, in wall time: the record's monotonic
// timestamp placed against the monotonic clock now. Where that cannot be
// read or looks wrong, now.
func (k kernelKill) at(now time.Time) time.Time {
	var ts unix.Timespec
	if k.usec <= 0 || unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return now
	}
	ago := time.Duration(ts.Nano()-k.usec*1000) * time.Nanosecond
	if ago < 0 || ago > 10*time.Second {
		return now
	}
	return now.Add(-ago)
}

var (
	// oom-kill:constraint=CONSTRAINT_MEMCG,...,task_memcg=/docker/<id>,task=hr-workload,pid=12000,uid=65534
	oomKillLine = regexp.MustCompile(`oom-kill:.*task_memcg=([^,]*),task=([^,]*),pid=(\d+)`)
	// Memory cgroup out of memory: Killed process 12000 (hr-workload) total-vm:1410732kB, anon-rss:125440kB, ...
	killedLine = regexp.MustCompile(`Killed process (\d+) \(([^)]*)\).*?anon-rss:(\d+)kB`)
	// The container id in a memcg path: /docker/<id> or docker-<id>.scope.
	memcgID = regexp.MustCompile(`([0-9a-f]{64})`)
)

// kmsgParser pairs the two lines of a kill.
type kmsgParser struct {
	pending map[int]kernelKill // by pid, from the oom-kill line
}

// line takes one kmsg record ("prio,seq,usec,flags;message") and returns a
// kill once both of its lines have been seen.
func (p *kmsgParser) line(record string) (kernelKill, bool) {
	head, msg, ok := strings.Cut(record, ";")
	if !ok {
		msg, head = record, ""
	}
	if m := oomKillLine.FindStringSubmatch(msg); m != nil {
		pid, _ := strconv.Atoi(m[3])
		k := kernelKill{process: m[2], pid: pid}
		if f := strings.Split(head, ","); len(f) >= 3 {
			k.usec, _ = strconv.ParseInt(f[2], 10, 64)
		}
		if id := memcgID.FindString(m[1]); id != "" {
			k.containerID = id
		}
		if p.pending == nil {
			p.pending = map[int]kernelKill{}
		}
		p.pending[pid] = k
		if len(p.pending) > 64 { // a lost second line must not grow this forever
			p.pending = map[int]kernelKill{pid: k}
		}
		return kernelKill{}, false
	}
	if m := killedLine.FindStringSubmatch(msg); m != nil {
		pid, _ := strconv.Atoi(m[1])
		k, ok := p.pending[pid]
		if !ok {
			return kernelKill{}, false
		}
		delete(p.pending, pid)
		k.process = m[2]
		if kb, err := strconv.ParseInt(m[3], 10, 64); err == nil && kb < 1<<40 {
			k.rssBytes = kb * 1024
		}
		return k, true
	}
	return kernelKill{}, false
}

// watchKernel follows /dev/kmsg from now on, reporting container kills,
// until stop is closed. It returns false at once when the log cannot be
// read (not root, a restricted kernel, a remote engine's host).
func watchKernel(path string, stop <-chan struct{}, report func(kernelKill)) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	// Skip what was logged before: only kills from now on are ours.
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return false
	}
	go func() {
		<-stop
		f.Close()
	}()
	go func() {
		var p kmsgParser
		buf := make([]byte, 8192)
		for {
			// Each read returns one record; the poller parks us while the
			// log is quiet, and Close wakes us.
			n, err := f.Read(buf)
			if err != nil {
				if err == syscall.EPIPE { // overwritten records: carry on
					continue
				}
				select {
				case <-stop:
					return
				default:
				}
				// Where the poller cannot park on the device, a quiet log
				// reads as EAGAIN: look again shortly.
				if pe, ok := err.(*os.PathError); ok && pe.Err == syscall.EAGAIN {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				return
			}
			if k, ok := p.line(strings.TrimRight(string(buf[:n]), "\n")); ok {
				report(k)
			}
		}
	}()
	return true
}
