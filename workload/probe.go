package workload

import (
	"archive/tar"
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload/wire"
)

// The probe: PID 1 of a trial's pod on a cluster, where headroom cannot
// read the container's cgroup from its own host. It reads its own cgroup
// (found from /proc/self/cgroup) at the sampling period and is the step
// driver too, on one ordered stream: every line it writes on stdout is
// one ProbeLine, so samples, kill counts, steps' output and their ends
// never interleave inside a line. headroom attaches to the container and
// writes Commands on its stdin as it does to the step driver; Op names
// what else it may ask (the kernel's peak, the final counters).

// ProbeMode is the argument that makes the binary the probe.
const ProbeMode = "probe"

// CopySelfMode copies the binary into a directory (an init container's
// shared volume) so that a task image's container can run it as the probe.
const CopySelfMode = "copy-self"

// Probe operations (Command.Op); "" runs Argv.
const (
	OpPeak  = "peak"  // answer with the kernel's peak since the last ask
	OpFinal = "final" // answer with the counters read at the trial's end
	OpHello = "hello" // say hello again (headroom attached after the first)
	OpKill  = "kill"  // kill every process and end (the container with it)
	// OpStopSteps kills every process but the probe and goes on: a
	// timed-out step stopped alone, its container kept for the verifier.
	// The answer is an exit line: 0 stopped, ProbeNotFirst when the probe
	// is not its PID namespace's first process and cannot reach them all.
	OpStopSteps = "stop-steps"
)

// ProbeNotFirst answers OpStopSteps from a probe that is not PID 1.
const ProbeNotFirst = 1

// Modes a cluster backend execs in a container that has the probe's
// binary, where the image may have no tar or cat.
const (
	UntarMode = "untar" // untar DIR: unpack a tar stream from stdin under DIR
	CatMode   = "cat"   // cat FILE: write FILE on stdout; exit 3 when missing
)

// CatMissing is cat's exit code for a file that does not exist.
const CatMissing = 3

// CatNotReadable is cat's exit code for a path that is a link out of its
// directory, under one, or not a regular file (OpenInDir: the step
// driver's rule for a reward, on a cluster too).
const CatNotReadable = 4

// probePrefix starts every probe line: a step's own output is framed, so
// nothing else can start one.
const probePrefix = "hr1 "

// Probe line kinds.
const (
	ProbeHello  = 'H' // H <cgroup version> <period ms> [why no cgroup]
	ProbeSample = 'S' // S <unix ms> <usage> <inactive_file> <pgmajfault> <oom_kill> <cpu ns> <periods> <throttled periods> <throttled ns> [<shmem>]
	ProbeOut    = 'O' // O <id> <text>: a line the step wrote on stdout
	ProbeErr    = 'E' // E <id> <text>: on stderr
	ProbeExit   = 'X' // X <id> <exit code>
	ProbePeak   = 'P' // P <id> <peak bytes> <0|1 known>
	ProbeFinal  = 'F' // F <id> <limit hits> <0|1 known> <pids limit hits> <oom_kill>
)

// ProbeLine is one line of the probe's stream, parsed.
type ProbeLine struct {
	Kind byte
	// ID is the command's (Command.End) for O, E, X, P and F.
	ID   string
	Text string // O and E; H: why there is no cgroup
	// Code is X's exit code.
	Code int
	// Version and Every are H's: the cgroup version read (0: none).
	Version int
	Every   time.Duration
	// Sample is S's reading.
	Time    time.Time
	Reading cgroup.Reading
	// Peak and Known are P's; F's: LimitHits, Known, PidsHits, OOMKills.
	Peak      int64
	Known     bool
	LimitHits int64
	PidsHits  int
	OOMKills  int
}

// maxProbeText bounds one O or E line; a longer one is sent in pieces.
const maxProbeText = 64 << 10

// ParseProbeLine reads one line of the probe's stream (without its
// newline); ok is false for anything that is not one (the container's
// own output before the probe started, say). Carriage returns at its end
// are dropped, every one: a line read from a CRLF stream keeps none, and
// a text that ended in them (a program's "\r\r\n") reads the same after
// String as before, which the fuzz target holds it to.
func ParseProbeLine(line string) (ProbeLine, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), probePrefix)
	if !ok || len(rest) < 1 {
		return ProbeLine{}, false
	}
	p := ProbeLine{Kind: rest[0]}
	rest = strings.TrimPrefix(rest[1:], " ")
	ints := func(s string, n int) ([]int64, bool) {
		f := strings.Fields(s)
		if len(f) != n {
			return nil, false
		}
		out := make([]int64, n)
		for i, x := range f {
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil || v < 0 {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	}
	switch p.Kind {
	case ProbeHello:
		head, why, _ := strings.Cut(rest, " ")
		v, err := strconv.Atoi(head)
		if err != nil || v < 0 || v > 2 {
			return ProbeLine{}, false
		}
		p.Version = v
		ms, why, _ := strings.Cut(why, " ")
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || n <= 0 || n > 3600_000 {
			return ProbeLine{}, false
		}
		p.Every, p.Text = time.Duration(n)*time.Millisecond, why
	case ProbeSample:
		// The tmpfs pages came tenth, later: a probe without them says 9.
		v, ok := ints(rest, 10)
		if !ok {
			v, ok = ints(rest, 9)
			v = append(v, 0)
		}
		if !ok || v[4] > 1<<31 {
			return ProbeLine{}, false
		}
		p.Time = time.UnixMilli(v[0])
		p.Reading = cgroup.Reading{Usage: v[1], InactiveFile: v[2], MajorFaults: v[3], OOMKills: int(v[4]),
			CPU: model.CPUUse{UsageNanos: v[5], Periods: v[6], ThrottledPeriods: v[7], ThrottledNanos: v[8]}, Shmem: v[9]}
	case ProbeOut, ProbeErr:
		id, text, ok := strings.Cut(rest, " ")
		if !ok && id == "" {
			return ProbeLine{}, false
		}
		p.ID, p.Text = id, text
	case ProbeExit, ProbePeak, ProbeFinal:
		id, nums, _ := strings.Cut(rest, " ")
		if id == "" {
			return ProbeLine{}, false
		}
		p.ID = id
		switch p.Kind {
		case ProbeExit:
			code, err := strconv.Atoi(nums)
			if err != nil || code < 0 || code > 255 {
				return ProbeLine{}, false
			}
			p.Code = code
		case ProbePeak:
			v, ok := ints(nums, 2)
			if !ok || v[1] > 1 {
				return ProbeLine{}, false
			}
			p.Peak, p.Known = v[0], v[1] == 1
		case ProbeFinal:
			v, ok := ints(nums, 4)
			if !ok || v[1] > 1 || v[2] > 1<<31 || v[3] > 1<<31 {
				return ProbeLine{}, false
			}
			p.LimitHits, p.Known, p.PidsHits, p.OOMKills = v[0], v[1] == 1, int(v[2]), int(v[3])
		}
	default:
		return ProbeLine{}, false
	}
	return p, true
}

// String writes the line as the probe sends it (without the newline).
func (p ProbeLine) String() string {
	b01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	var s string
	switch p.Kind {
	case ProbeHello:
		s = fmt.Sprintf("%d %d", p.Version, p.Every.Milliseconds())
		if p.Text != "" {
			s += " " + p.Text
		}
	case ProbeSample:
		r := p.Reading
		s = fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d", p.Time.UnixMilli(), r.Usage, r.InactiveFile, r.MajorFaults, r.OOMKills,
			r.CPU.UsageNanos, r.CPU.Periods, r.CPU.ThrottledPeriods, r.CPU.ThrottledNanos, r.Shmem)
	case ProbeOut, ProbeErr:
		s = p.ID + " " + p.Text
	case ProbeExit:
		s = fmt.Sprintf("%s %d", p.ID, p.Code)
	case ProbePeak:
		s = fmt.Sprintf("%s %d %d", p.ID, p.Peak, b01(p.Known))
	case ProbeFinal:
		s = fmt.Sprintf("%s %d %d %d %d", p.ID, p.LimitHits, b01(p.Known), p.PidsHits, p.OOMKills)
	}
	return probePrefix + string(p.Kind) + " " + s
}

// probe is the probe's state.
type probe struct {
	out   io.Writer
	every time.Duration
	why   string     // why there is no cgroup to read
	mu    sync.Mutex // one line at a time on out

	cg *cgroup.Reader
	// cgMu guards cg and the peak's bookkeeping (the sampler and the
	// commands' answers read it from different goroutines).
	cgMu sync.Mutex
	// win is the step's window where the peak cannot be reset: an
	// unchanged peak means the window's own was below it, and the
	// samples say what it was.
	win peakWindow
	// raise starts each step at model.StepRaisedOOMScoreAdj, as the
	// Docker driver does on an engine that cannot spare it (oomSpare):
	// the probe holds the pod's own score, its steps the kernel's
	// highest, so the kernel takes any process of the task before it.
	raise *raiser
}

func (p *probe) send(l ProbeLine) {
	s := l.String() + "\n"
	p.mu.Lock()
	io.WriteString(p.out, s)
	p.mu.Unlock()
}

// runProbe samples the cgroup under root every period and serves commands
// from in until SIGTERM (the pod's deletion); the end of in (headroom let
// go) leaves it sampling, as another attach may follow.
func runProbe(args []string, in io.Reader, stdout, stderr io.Writer) int {
	every, root := 50*time.Millisecond, "/sys/fs/cgroup"
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--every":
			d, err := time.ParseDuration(args[i+1])
			if err != nil || d <= 0 {
				fmt.Fprintf(stderr, "hr-workload probe: bad --every %q\n", args[i+1])
				return 2
			}
			every = d
		case "--cgroup-root":
			root = args[i+1]
		}
	}
	// Its threads before anything else: the task may fill the pod's
	// pids limit (threads.go).
	pinProcs(probeProcs)
	reserveThreads(probeSpareThreads)
	// The probe is the step driver on a cluster: its channel is its own
	// as the driver's is (guardChannel).
	if err := guardChannel(); err != nil {
		fmt.Fprintf(stderr, "hr-workload probe: %v\n", err)
	}
	p := startProbe(root, every, stdout, nil)
	p.raise = newRaiser()
	workDir, _ = os.Getwd()
	// As the pod's task container's PID 1 it holds the signals a step
	// may send it, as the Docker step driver does: a step's `kill -HUP 1`
	// (or TERM, ABRT, SEGV...) ended the whole pod. Its pod ends by
	// SIGKILL (the pod's grace period is 0).
	if os.Getpid() == 1 {
		holdInitSignals(stderr, "probe", "headroom's probe and step driver")
		go p.serve(in, stderr)
		select {}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	go p.serve(in, stderr)
	<-term
	return 0
}

// startProbe says hello and samples until stop is closed.
func startProbe(root string, every time.Duration, out io.Writer, stop <-chan struct{}) *probe {
	p := &probe{out: out, every: every}
	cg, err := cgroup.Self(root)
	if err != nil {
		p.why = strings.ReplaceAll(err.Error(), "\n", " ")
		p.hello()
		return p
	}
	p.cg = cg
	p.hello()
	go p.sample(every, stop)
	return p
}

func (p *probe) hello() {
	l := ProbeLine{Kind: ProbeHello, Every: p.every, Text: p.why}
	if p.cg != nil {
		l.Version = p.cg.Version()
	}
	p.send(l)
}

func (p *probe) sample(every time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var now time.Time
		select {
		case now = <-tick.C:
		case <-stop:
			return
		}
		p.cgMu.Lock()
		m, err := p.cg.Read()
		if err == nil {
			p.win.sample(m.Usage)
		}
		p.cgMu.Unlock()
		if err != nil {
			continue
		}
		p.send(ProbeLine{Kind: ProbeSample, Time: now, Reading: m})
	}
}

// serve reads commands until in ends, then waits for the step in flight;
// a step runs while the probe still answers the other operations.
func (p *probe) serve(in io.Reader, stderr io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var steps sync.Mutex // one step at a time, in order
	for sc.Scan() {
		var c Command
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.End == "" || strings.ContainsAny(c.End, " \n") {
			fmt.Fprintf(stderr, "hr-workload probe: bad command %q: %v\n", sc.Text(), err)
			continue
		}
		switch c.Op {
		case OpHello:
			p.hello()
		case OpKill:
			// PID 1 of its namespace: kill(-1) reaches every other process.
			_ = syscall.Kill(-1, syscall.SIGKILL)
			os.Exit(128 + int(syscall.SIGKILL))
		case OpStopSteps:
			code := ProbeNotFirst
			if os.Getpid() == 1 {
				// PID 1 of its namespace: kill(-1) reaches every other
				// process, itself spared; the step's own wait then ends.
				_ = syscall.Kill(-1, syscall.SIGKILL)
				code = 0
			}
			p.send(ProbeLine{Kind: ProbeExit, ID: c.End, Code: code})
		case OpUser:
			// Whether a step can run as that user: the cluster backend
			// asks once at the start, as the Docker driver is asked.
			said := &frameWriter{fn: func(text string) { p.send(ProbeLine{Kind: ProbeErr, ID: c.End, Text: text}) }}
			code := userOp(c, said)
			said.Close()
			p.send(ProbeLine{Kind: ProbeExit, ID: c.End, Code: code})
		case OpPeak:
			peak, ok := p.takePeak()
			p.send(ProbeLine{Kind: ProbePeak, ID: c.End, Peak: peak, Known: ok})
		case OpFinal:
			l := ProbeLine{Kind: ProbeFinal, ID: c.End}
			p.cgMu.Lock()
			if p.cg != nil {
				l.LimitHits, l.Known = p.cg.LimitHits()
				l.PidsHits = p.cg.PidsLimitHits()
				n, _ := p.cg.OOMKills()
				l.OOMKills = n
			}
			p.cgMu.Unlock()
			p.send(l)
		default:
			steps.Lock()
			go func() {
				defer steps.Unlock()
				p.send(ProbeLine{Kind: ProbeExit, ID: c.End, Code: p.run(c)})
			}()
		}
	}
	steps.Lock()
	steps.Unlock()
}

// takePeak is the kernel's peak since the last call (peakWindow.take),
// with the usage read now.
func (p *probe) takePeak() (int64, bool) {
	p.cgMu.Lock()
	defer p.cgMu.Unlock()
	if p.cg == nil {
		return 0, false
	}
	usage, uerr := p.cg.Usage()
	peak, ok := p.cg.TakePeak()
	if !ok {
		return 0, false
	}
	after, _ := p.cg.TakePeak()
	if uerr != nil {
		usage = p.win.lastUsage
	}
	return p.win.take(peak, after, usage)
}

// peakWindow is a step's peak where the probe may not reset the kernel's
// mark (a pod's read-only cgroup file system): lastPeak is the all-time
// mark as last reported, windowMax the largest usage measured since.
type peakWindow struct {
	lastPeak, windowMax, lastUsage int64
}

// sample takes a sampled usage.
func (w *peakWindow) sample(usage int64) {
	w.windowMax, w.lastUsage = max(w.windowMax, usage), usage
}

// take is the peak since the last take, given the mark read (peak), the
// mark read again right after a reset was tried (after) and the usage read
// now: where the reset took, the mark; else the all-time mark if it rose
// since the last take (the window reached it); else the largest usage
// measured in the window — its samples and the usages read at its two
// ends. The window starts from the usage read at its start, not from the
// last sample: after a step killed at its limit that sample is the
// killed step's, and the step after it "needed" it (issue #39).
func (w *peakWindow) take(peak, after, usage int64) (int64, bool) {
	w.lastUsage = usage
	out := peak
	switch {
	case after < peak: // reset: the next peak is the next window's own
		w.lastPeak = after
	case peak > w.lastPeak:
		w.lastPeak = peak
	default:
		out = max(w.windowMax, usage)
	}
	w.windowMax = usage
	// Without a usage or sample for the window, an unchanged mark has
	// nothing to stand for it: not known, rather than a peak of 0.
	return out, out > 0
}

// run runs one step as the probe's child, its output framed line by line.
func (p *probe) run(c Command) int {
	emit := func(kind byte) io.WriteCloser {
		return &frameWriter{fn: func(text string) { p.send(ProbeLine{Kind: kind, ID: c.End, Text: text}) }}
	}
	stdout, stderr := emit(ProbeOut), emit(ProbeErr)
	defer stdout.Close()
	defer stderr.Close()
	if len(c.Argv) == 0 {
		fmt.Fprintln(stderr, "hr-workload probe: empty command")
		return 127
	}
	cmd, err := stepCommand(c, p.raise.adj(), stdout, stderr)
	switch {
	case errors.Is(err, errNoWorkDir):
		fmt.Fprintf(stderr, "hr-workload probe: %v\n", err)
		return 126
	case err != nil:
		fmt.Fprintf(stderr, "hr-workload probe: user %s: %v\n", c.User, err)
		return 126
	}
	err = runDrainedTo(cmd, stdout, stderr, nil, nil, c.Terminal, cmd.Start, func() {})
	return exitCode(cmd, err, stderr)
}

// exitCode is how a command ended as the engine's exec reports it:
// 128+signal for a killed process, 126/127 when it could not start.
func exitCode(cmd *exec.Cmd, err error, stderr io.Writer) int {
	if cmd.ProcessState != nil {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return cmd.ProcessState.ExitCode()
	}
	fmt.Fprintf(stderr, "hr-workload: %v\n", err)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return 127
	}
	return 126
}

// frameWriter hands on each complete line (and the rest at Close), long
// ones in pieces.
type frameWriter struct {
	fn  func(string)
	buf []byte
}

func (w *frameWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			for len(w.buf) >= maxProbeText {
				w.fn(string(w.buf[:maxProbeText]))
				w.buf = w.buf[maxProbeText:]
			}
			return len(b), nil
		}
		w.fn(strings.TrimSuffix(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
}

func (w *frameWriter) Close() error {
	if len(w.buf) > 0 {
		w.fn(string(w.buf))
		w.buf = nil
	}
	return nil
}

// copySelf copies this executable into dir as Binary's name, for a task
// image's container to run from a shared volume.
func copySelf(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: hr-workload copy-self DIR")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		self = wire.Binary
	}
	src, err := os.Open(self)
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload copy-self: %v\n", err)
		return 1
	}
	defer src.Close()
	dst := filepath.Join(args[0], filepath.Base(wire.Binary))
	tmp := dst + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err == nil {
		_, err = io.Copy(f, src)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload copy-self: %v\n", err)
		return 1
	}
	return 0
}

// lookupUser is who a step of user ("name", "uid", either with ":group"
// by name or gid) runs as, as runc's exec (docker exec -u) makes it: the
// user is found in the image's /etc/passwd by name or by uid; a uid it
// lacks runs with group 0 and home "/", a name it lacks is an error. A
// group given is found in /etc/group by name or gid (a gid it lacks is
// that gid); with none, the passwd entry's group, and the groups whose
// member list names the user are its supplementary ones (none when a
// group was given, as runc). Both files are the task's to write, and the
// driver reads them as root in the container's PID 1: a line at a time
// (scanEtc), never a whole file held (a 400 MiB /etc/passwd cost the
// driver its memory, the kernel killed it as headroom's own failure).
func lookupUser(user string) (*syscall.Credential, string, error) {
	name, group, hasGroup := strings.Cut(user, ":")
	cred := &syscall.Credential{}
	uid, numeric := parseID(name)
	home, login, found := "/", "", false
	var bad error
	err := scanEtc(etcPasswd, func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		u, e1 := parseID(f[2])
		if f[0] != name && !(numeric && e1 && u == uid) {
			return true
		}
		g, e2 := parseID(f[3])
		if !e1 || !e2 {
			bad = fmt.Errorf("bad /etc/passwd line for %s", name)
			return false
		}
		cred.Uid, cred.Gid, login, found = u, g, f[0], true
		if len(f) >= 6 && f[5] != "" {
			home = f[5]
		}
		return false
	})
	switch {
	case err != nil && !(numeric && errors.Is(err, os.ErrNotExist)):
		return nil, "", err
	case bad != nil:
		return nil, "", bad
	case !found && !numeric:
		return nil, "", errors.New("not in /etc/passwd")
	case !found:
		cred.Uid, cred.Gid = uid, 0
	}
	if hasGroup {
		gid, numericGroup := parseID(group)
		foundGroup := false
		err := scanEtc(etcGroup, func(f []string) bool {
			if len(f) < 3 {
				return true
			}
			g, ok := parseID(f[2])
			if ok && (f[0] == group || numericGroup && g == gid) {
				cred.Gid, foundGroup = g, true
				return false
			}
			return true
		})
		switch {
		case err != nil && !(numericGroup && errors.Is(err, os.ErrNotExist)):
			return nil, "", err
		case !foundGroup && !numericGroup:
			return nil, "", fmt.Errorf("group %s is not in /etc/group", group)
		case !foundGroup:
			cred.Gid = gid
		}
		cred.Groups = []uint32{cred.Gid}
		return cred, home, nil
	}
	cred.Groups = []uint32{cred.Gid}
	if login == "" {
		return cred, home, nil
	}
	err = scanEtc(etcGroup, func(f []string) bool {
		if len(f) < 4 {
			return true
		}
		g, ok := parseID(f[2])
		if !ok || g == cred.Gid {
			return true
		}
		for _, m := range strings.Split(f[3], ",") {
			if m == login && len(cred.Groups) < maxGroups {
				cred.Groups = append(cred.Groups, g)
			}
		}
		return true
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	return cred, home, nil
}

// The image's user and group databases (a test's own files in tests).
var etcPasswd, etcGroup = "/etc/passwd", "/etc/group"

// parseID reads a uid or gid.
func parseID(s string) (uint32, bool) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err == nil
}

// Bounds on what scanEtc reads of a task's /etc file: its size, a line's
// length, and the groups a user gets (the kernel's NGROUPS_MAX).
const (
	maxEtcBytes = 16 << 20
	maxEtcLine  = 64 << 10
	maxGroups   = 65536
)

// scanEtc calls each with the colon-separated fields of each line of the
// file at p until it says stop: a regular file only, opened without
// blocking (a FIFO there would hold the driver), of at most maxEtcBytes,
// whose lines are at most maxEtcLine long. A missing file is
// os.ErrNotExist.
func scanEtc(p string, each func(fields []string) bool) error {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", p)
	case st.Size() > maxEtcBytes:
		return fmt.Errorf("%s is larger than %d MiB", p, maxEtcBytes>>20)
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxEtcBytes))
	sc.Buffer(make([]byte, 4096), maxEtcLine)
	for sc.Scan() {
		if !each(strings.Split(sc.Text(), ":")) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", p, err)
	}
	return nil
}

// untar unpacks a tar stream from in under dir: directories, regular
// files and symlinks, modes kept; a name that climbs out of dir is refused.
func untar(args []string, in io.Reader, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: hr-workload untar DIR")
		return 2
	}
	dir := args[0]
	tr := tar.NewReader(in)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "hr-workload untar: %v\n", err)
			return 1
		}
		name := filepath.Join(dir, filepath.Clean("/"+hdr.Name))
		if rel, err := filepath.Rel(dir, name); err != nil || strings.HasPrefix(rel, "..") {
			fmt.Fprintf(stderr, "hr-workload untar: %s is outside %s\n", hdr.Name, dir)
			return 1
		}
		// The permissions with the setuid, setgid and sticky bits, as
		// the engine's copy keeps them (a 1777 directory stays one).
		m := hdr.FileInfo().Mode()
		mode := m.Perm() | m&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err = os.MkdirAll(name, mode); err == nil {
				err = chmodDir(name, mode)
			}
			if err != nil && name == filepath.Clean(dir) {
				err = nil // the root itself, not ours to change
			}
		case tar.TypeSymlink:
			_ = os.Remove(name)
			err = os.Symlink(hdr.Linkname, name)
		case tar.TypeReg:
			// As the engine's copy does: what the task left in the
			// file's place that is no directory (a FIFO, a link, a file)
			// is removed and the file made anew, never opened: a FIFO at
			// /tests/test.sh held the copy until headroom gave up on it,
			// and a link there was written through.
			st, lerr := os.Lstat(name)
			switch {
			case lerr == nil && st.IsDir():
				err = fmt.Errorf("cannot overwrite directory %s with a file", name)
			case lerr == nil:
				_ = os.Remove(name)
			}
			var f *os.File
			if err == nil {
				f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, mode)
				if errors.Is(err, os.ErrExist) {
					err = fmt.Errorf("%s was made again while headroom replaced it", name)
				}
			}
			if err == nil {
				_, err = io.Copy(f, tr)
				// The mode set on the file it opened, never through what
				// is at its path by then.
				if err == nil {
					err = f.Chmod(mode)
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			fmt.Fprintf(stderr, "hr-workload untar: %v\n", err)
			return 1
		}
	}
}

// chmodDir sets the mode of the directory at name, not of what a link
// there leads to.
func chmodDir(name string, mode os.FileMode) error {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	bits := uint32(mode.Perm())
	for b, u := range map[os.FileMode]uint32{os.ModeSetuid: unix.S_ISUID, os.ModeSetgid: unix.S_ISGID, os.ModeSticky: unix.S_ISVTX} {
		if mode&b != 0 {
			bits |= u
		}
	}
	if err := unix.Fchmod(fd, bits); err != nil {
		return &os.PathError{Op: "chmod", Path: name, Err: err}
	}
	return nil
}

// cat writes one file on stdout.
func cat(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: hr-workload cat FILE")
		return 2
	}
	f, err := OpenInDir(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload cat: %v\n", err)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return CatMissing
		case errors.Is(err, ErrLink), errors.Is(err, ErrNotRegular):
			return CatNotReadable
		}
		return 1
	}
	defer f.Close()
	if _, err := io.Copy(stdout, f); err != nil {
		fmt.Fprintf(stderr, "hr-workload cat: %v\n", err)
		return 1
	}
	return 0
}
