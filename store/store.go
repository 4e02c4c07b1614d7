package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unique"

	"golang.org/x/sys/unix"

	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// File names inside an experiment directory.
const (
	ManifestFile = "manifest.json"
	TrialsFile   = "trials.jsonl"
	TrialsDir    = "trials"
)

// NewID makes an experiment id: sortable by time, unique by a suffix.
func NewID(now time.Time) string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

// Experiment is an experiment directory being written.
type Experiment struct {
	Dir      string
	manifest Manifest
	trials   *os.File
	open     map[string]*trialFiles
	// compacting counts finished trials' traces being compacted;
	// compactOne lets one run at a time.
	compacting sync.WaitGroup
	compactOne sync.Mutex
	// id is the directory's identity when it was made or opened, dirf a
	// handle on it (where it went, if moved), gone why nothing more is
	// written (checkDir), lock the one-writer lock held until Close.
	id   identity
	dirf *os.File
	gone *DirGoneError
	lock *Lock
	// trialsDir is the identity of TrialsDir as made or opened, replaced
	// why nothing more is written when a file in the directory is no
	// longer the experiment's (checkFiles).
	trialsDir identity
	replaced  error
	// earlier are the last records of the trials a resume may run
	// again, read at its first rerun (markRerun).
	earlier map[string]model.TrialResult
	// trialsf is a handle on TrialsDir: every trial's directory is made
	// and written relative to it, never through a link; ours are the
	// trial directories the experiment made (those there when it was
	// opened, for a resume, and those made since): any other is refused.
	trialsf *os.File
	ours    map[identity]bool
	// written is the size trials.jsonl has after the records written to
	// it: a file that is not that size was cut or written by another.
	written int64
	// summary is SummaryFile being appended to (nil: none is written),
	// summaryRows its rows, nextLine the line of trials.jsonl the next
	// record goes to.
	summary     *os.File
	summaryRows int
	nextLine    int
}

type trialFiles struct {
	dir     *os.File // the trial's directory
	samples *bufio.Writer
	sf      *os.File
	log     *bufio.Writer
	lf      *os.File
	// What the log keeps of the output (see LogStepHeadBytes): the bytes
	// of output written for the trial and for the step, the step's latest
	// lines held back (ring), and what was left out, for the step and
	// after the trial's cap.
	logged, stepHead      int64
	ring                  []string
	ringBytes             int64
	stepDrop, trialDrop   int
	stepDropB, trialDropB int64
	capped                bool // the trial's cap was reached, and said
	// marked counts headroom's own lines (mark), markCapped says their
	// cap was reached, and said.
	marked     int64
	markCapped bool
}

// A trial's log.txt keeps, of each step's output, its first
// LogStepHeadBytes and its last LogStepTailBytes, with a line saying what
// was left out between them, and at most LogTrialBytes of output in all
// (then a line says so, and at the end what was left out): a task that
// prints a gigabyte makes a log of megabytes.
const (
	LogStepHeadBytes = model.LogStepHeadBytes
	LogStepTailBytes = model.LogStepTailBytes
	LogTrialBytes    = 16 << 20
	// LogMarkBytes bounds headroom's own lines in a trial's log (mark).
	LogMarkBytes = 4 << 20
)

// output writes one line of output to the log, or holds it back, or
// counts it, within the caps.
func (tf *trialFiles) output(line string) {
	n := int64(len(line))
	switch {
	case tf.logged >= LogTrialBytes:
		tf.dropPastCap(n)
	case tf.stepHead < LogStepHeadBytes:
		tf.log.WriteString(line)
		tf.stepHead += n
		tf.logged += n
	default:
		tf.ring = append(tf.ring, line)
		tf.ringBytes += n
		for tf.ringBytes > LogStepTailBytes && len(tf.ring) > 0 {
			tf.ringBytes -= int64(len(tf.ring[0]))
			tf.stepDrop++
			tf.stepDropB += int64(len(tf.ring[0]))
			tf.ring[0] = ""
			tf.ring = tf.ring[1:]
		}
	}
}

// mark writes one of headroom's own lines (a step's start or end, a
// kill) to the log: past the output's cap too, so the log still says
// which steps ran, but at most LogMarkBytes of them, then counted with
// what the cap left out. Uncounted, a trial of 82,000 steps made a log of
// 44 MB of them alone (the thirteenth attacker's 3).
func (tf *trialFiles) mark(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	n := int64(len(line))
	if tf.marked+n > LogMarkBytes {
		if !tf.markCapped {
			tf.markCapped = true
			fmt.Fprintf(tf.log, "==> [headroom] this trial's log reached %s of headroom's own lines (its steps' starts and ends): the rest are counted, not kept (its record has its steps)\n", model.FormatBytes(LogMarkBytes))
		}
		tf.trialDrop++
		tf.trialDropB += n
		return
	}
	tf.log.WriteString(line)
	tf.marked += n
}

// dropPastCap counts a line past the trial's cap, saying so at the first.
func (tf *trialFiles) dropPastCap(n int64) {
	if !tf.capped {
		tf.capped = true
		fmt.Fprintf(tf.log, "==> [headroom] this trial's log reached %s of output: the rest is counted, not kept (its record has each step's last lines)\n", model.FormatBytes(LogTrialBytes))
	}
	tf.trialDrop++
	tf.trialDropB += n
}

// endStep writes what a step's output held back: a line saying what was
// left out, then its tail; the next step starts with its own head.
func (tf *trialFiles) endStep() {
	if tf.stepDrop > 0 {
		fmt.Fprintf(tf.log, "==> [headroom] %d line(s), %s of this step's output not kept here (the log keeps a step's first %s and last %s, at most %d lines)\n",
			tf.stepDrop, model.FormatBytes(tf.stepDropB), model.FormatBytes(LogStepHeadBytes), model.FormatBytes(LogStepTailBytes), model.LogStepTailLines)
	}
	ring := tf.ring
	tf.ring, tf.ringBytes, tf.stepHead, tf.stepDrop, tf.stepDropB = nil, 0, 0, 0, 0
	for _, l := range ring {
		if tf.logged >= LogTrialBytes {
			tf.dropPastCap(int64(len(l)))
			continue
		}
		tf.log.WriteString(l)
		tf.logged += int64(len(l))
	}
}

// Open reopens an experiment directory to append to it (resume). The
// manifest is rewritten with m. It is refused (LockedError) while
// another process writes the experiment.
func Open(dir string, m Manifest) (*Experiment, error) {
	lk, err := LockExperiment(dir)
	if err != nil {
		return nil, err
	}
	return OpenLocked(dir, m, lk)
}

// OpenLocked is Open with dir's lock already taken (LockExperiment); the
// experiment holds it until Close, or releases it if it cannot open.
func OpenLocked(dir string, m Manifest, lk *Lock) (_ *Experiment, err error) {
	defer func() {
		if err != nil {
			lk.Unlock()
		}
	}()
	e := &Experiment{Dir: dir, manifest: m, open: map[string]*trialFiles{}, lock: lk}
	defer func() {
		if err != nil {
			e.closeDirs()
		}
	}()
	if err := e.identify(); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", dir, err)
	}
	if err := unix.Mkdirat(int(e.dirf.Fd()), TrialsDir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(dir, TrialsDir), Err: err}
	}
	if err := e.openTrialsDir(); err != nil {
		return nil, err
	}
	// The trial directories of the runs before: a trial run again
	// writes into its own.
	if e.ours, err = dirsIn(e.trialsf); err != nil {
		return nil, err
	}
	if err := e.writeManifest(); err != nil {
		return nil, fmt.Errorf("experiment %s: %w", dir, err)
	}
	f, err := appendAt(e.dirf, TrialsFile)
	if err != nil {
		return nil, err
	}
	// A torn last line (a crash mid-append) is no record: it is cut off,
	// so it neither glues itself to the next record nor sits mid-file
	// where a reader would refuse it; its trial is run again.
	if end, torn, err := lastNewline(filepath.Join(dir, TrialsFile)); err == nil && torn {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, fmt.Errorf("cutting the torn last record of %s: %w", TrialsFile, err)
		}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	e.trials, e.written = f, st.Size()
	e.nextLine = 1
	e.openSummary()
	return e, nil
}

// openTrialsDir takes the handle on TrialsDir everything under it is
// written relative to, and notes its identity (checkFiles).
func (e *Experiment) openTrialsDir() (err error) {
	if e.trialsf, err = openDirAt(e.dirf, TrialsDir); err != nil {
		return err
	}
	e.trialsDir, err = identityOf(e.trialsf)
	return err
}

// closeDirs closes the handles on the experiment's directories.
func (e *Experiment) closeDirs() {
	if e.trialsf != nil {
		e.trialsf.Close()
		e.trialsf = nil
	}
	if e.dirf != nil {
		e.dirf.Close()
		e.dirf = nil
	}
}

// lastNewline says whether the file at path ends in a torn line (no
// newline), and where the line before it ends, reading back from its end
// rather than the whole file.
func lastNewline(path string) (end int64, torn bool, err error) {
	f, err := openRegular(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, false, err
	}
	buf := make([]byte, 64<<10)
	for at := st.Size(); at > 0; {
		n := min(int64(len(buf)), at)
		at -= n
		if _, err := f.ReadAt(buf[:n], at); err != nil {
			return 0, false, err
		}
		if at+n == st.Size() && buf[n-1] == '\n' {
			return st.Size(), false, nil
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return at + int64(i) + 1, true, nil
		}
	}
	return 0, true, nil
}

// Create makes the experiment directory (owner-only) under root and writes
// the manifest. It fails before any trial runs if root is not writable.
func Create(root string, m Manifest) (*Experiment, error) {
	dir := filepath.Join(root, m.ID)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("experiment directory: %w (choose another with --out)", err)
	}
	if err := checkFree(root); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("experiment directory: %w (choose another with --out)", err)
	}
	e, err := create(dir, m)
	if err != nil {
		// Never a half-made experiment (a lock, an empty trials/, no
		// manifest) that report and resume then call not found.
		if e != nil {
			e.closeDirs()
		}
		if e != nil && e.lock != nil {
			e.lock.Unlock()
		}
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return e, nil
}

// create fills the new directory dir; on an error Create removes it.
func create(dir string, m Manifest) (*Experiment, error) {
	if err := os.Mkdir(filepath.Join(dir, TrialsDir), 0o700); err != nil {
		return nil, err
	}
	lk, err := LockExperiment(dir)
	if err != nil {
		return nil, err
	}
	e := &Experiment{Dir: dir, manifest: m, open: map[string]*trialFiles{}, lock: lk}
	if err := e.identify(); err != nil {
		return e, err
	}
	if err := e.openTrialsDir(); err != nil {
		return e, err
	}
	e.ours = map[identity]bool{}
	if err := e.writeManifest(); err != nil {
		return e, err
	}
	f, err := createAt(e.dirf, TrialsFile, false, unix.O_APPEND)
	if err != nil {
		return e, err
	}
	e.trials = f
	e.nextLine = 1
	e.openSummary()
	return e, nil
}

// identify notes the directory's identity and keeps a handle on it, so
// that checkDir can tell it removed or moved, and say where it went.
func (e *Experiment) identify() error {
	id, err := identify(e.Dir)
	if err != nil {
		return err
	}
	e.id = id
	e.dirf, err = openDir(e.Dir)
	return err
}

// MinFreeBytes is the free space an experiment needs to start: samples and
// logs of a long sweep take tens of MiB.
const MinFreeBytes = 64 << 20

func checkFree(root string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return nil // not knowable here; writes will say
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < MinFreeBytes {
		return fmt.Errorf("only %s free under %s; an experiment needs at least %s (free space or choose another with --out)",
			model.FormatBytes(free), root, model.FormatBytes(MinFreeBytes))
	}
	return nil
}

// writeManifest replaces the manifest atomically: a crash leaves the old
// one or the new one, never half of either.
func (e *Experiment) writeManifest() error {
	b, err := json.MarshalIndent(e.manifest, "", "  ")
	if err != nil {
		return err
	}
	d := e.dirf
	if d == nil {
		if d, err = openDir(e.Dir); err != nil {
			return fmt.Errorf("write manifest: %w", err)
		}
		defer d.Close()
	}
	if err := replaceAt(d, ManifestFile, append(b, '\n')); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// Manifest returns the manifest as written so far.
func (e *Experiment) Manifest() Manifest { return e.manifest }

// SetSampleSource records where memory readings came from.
func (e *Experiment) SetSampleSource(s string) error {
	if e.manifest.Engine.SampleSource == s {
		return nil
	}
	e.manifest.Engine.SampleSource = s
	return e.writeManifest()
}

// Record consumes one event of the runner's stream.
func (e *Experiment) Record(ev event.Event) error {
	switch ev.(type) {
	case event.TrialStarted, event.TrialEnded, event.SweepEnded:
		// Where a record or a trace would be written: not into a
		// directory that is no longer this experiment's.
		err := e.checkDir()
		if err == nil {
			err = e.checkFiles()
		}
		if err != nil {
			if end, ok := ev.(event.TrialEnded); ok {
				closeDir(e.closeTrial(end.TrialID()))
			}
			return err
		}
	}
	switch ev := ev.(type) {
	case event.TrialStarted:
		return e.openTrial(ev.TrialID(), ev.SampleSource, ev.At())
	case event.MemorySample:
		if tf := e.open[ev.TrialID()]; tf != nil {
			writeCSVSample(tf.samples, ev.Sample)
		}
	case event.StepStarted:
		if tf := e.open[ev.TrialID()]; tf != nil {
			tf.endStep()
			tf.mark("==> [%s] %s\n", ev.Phase, model.StepLabel(ev.Step.Name, ev.Step.Show))
		}
	case event.OutputLine:
		if tf := e.open[ev.TrialID()]; tf != nil && !ev.Live {
			// What the runner held back and did not send, between the
			// step's head and this line: left out here too.
			tf.stepDrop += ev.Skipped
			tf.stepDropB += ev.SkippedBytes
			tf.output(model.LogOutputLine(ev.Stream, ev.Text) + "\n")
		}
	case event.OOMKill:
		if tf := e.open[ev.TrialID()]; tf != nil && ev.Detail {
			tf.mark("==> the kernel killed %s, pid %d, rss %s\n", ev.OOM.Process, ev.OOM.PID, model.FormatBytes(ev.OOM.RSSBytes))
		} else if tf != nil {
			what := ""
			if ev.OOM.Process != "" {
				what = fmt.Sprintf(": killed %s, pid %d, rss %s", ev.OOM.Process, ev.OOM.PID, model.FormatBytes(ev.OOM.RSSBytes))
			}
			tf.mark("==> OOM kill in step %s (source %s, working set %s)%s\n", ev.OOM.Step, ev.OOM.Source, model.FormatBytes(ev.OOM.WorkingSetBytes), what)
		}
	case event.StepEnded:
		if tf := e.open[ev.TrialID()]; tf != nil {
			tf.endStep()
			tf.mark("==> %s exited %s after %s, peak %s\n", ev.Result.Name, ev.Result.ExitText(), ev.Result.Duration().Round(time.Millisecond), model.FormatBytes(ev.Result.PeakWorkingSetBytes))
		}
	case event.TrialEnded:
		td := e.closeTrial(ev.TrialID())
		err := e.Append(ev.Result)
		if err != nil || td == nil {
			closeDir(td)
		} else {
			// Compacted only once the record is safe, and off the event
			// stream (a 30-minute trace takes a quarter of a second on a
			// busy host: a kill elsewhere must not wait for it); one at a
			// time; Close waits. A failure or a crash leaves the
			// full-resolution CSV, which reads the same.
			r, limits := ev.Result, e.limits(ev.Result.Policy)
			e.compacting.Add(1)
			go func() {
				defer e.compacting.Done()
				defer td.Close()
				e.compactOne.Lock()
				defer e.compactOne.Unlock()
				_ = compactTrace(td, r, limits)
			}()
		}
		return err
	case event.SweepEnded:
		now := ev.At()
		e.manifest.Finished = &now
		e.manifest.Status = "finished"
		if ev.Interrupted {
			e.manifest.Status = "interrupted"
		}
		return e.writeManifest()
	}
	return nil
}

func (e *Experiment) openTrial(id string, source string, at time.Time) error {
	if source != "" {
		if err := e.SetSampleSource(source); err != nil {
			return err
		}
	}
	td, made, err := e.trialDir(id)
	if err != nil {
		// Nothing more is written: the experiment is not as it made it.
		e.replaced = fmt.Errorf("%w; the sweep was stopped: remove it, then resume", err)
		return e.replaced
	}
	// A trial run again (resume) starts its trace afresh: the files of
	// its earlier run are unlinked (a link among them too, its target
	// untouched); in a directory just made, anything there refuses it.
	files := make([]*os.File, 0, 2)
	if !made {
		err = e.markRerun(id, at)
	}
	if !made && err == nil {
		err = unlinkAt(td, SamplesCompact)
	}
	for _, name := range []string{SamplesCSV, "log.txt"} {
		var f *os.File
		if err == nil {
			f, err = createAt(td, name, !made, 0)
		}
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			td.Close()
			e.replaced = fmt.Errorf("%w; the sweep was stopped: remove it, then resume", err)
			return e.replaced
		}
		files = append(files, f)
	}
	sf, lf := files[0], files[1]
	tf := &trialFiles{dir: td, samples: bufio.NewWriter(sf), sf: sf, log: bufio.NewWriter(lf), lf: lf}
	tf.samples.WriteString(csvHeader)
	e.open[id] = tf
	return nil
}

// markRerun records, before a trial run again (resume) loses the trace of
// its earlier run, that its rerun began: its last record, a cancelled or
// infra-error run's, is followed by a cancelled one saying the rerun
// began at at. The rerun's own record, when it ends, is the last again;
// if headroom dies first, the record that counts says what the trial's
// files then hold: a rerun's partial trace. Before, the earlier record
// stood beside the rerun's partial samples and log (the eleventh
// attacker's 14), and `show` gave that run's ending to another run's
// trace. A trial with no record (interrupted before one) needs none.
//
// The records are read once, at the first rerun of a resume.
func (e *Experiment) markRerun(id string, at time.Time) error {
	if e.earlier == nil {
		// A record the reader refuses was refused by the resume before
		// it ran anything; here it only means no mark.
		recs, _, _ := ReadTrialsBrief(e.Dir)
		e.earlier = map[string]model.TrialResult{}
		for _, r := range recs {
			r.Steps = nil
			e.earlier[r.ID] = r
		}
	}
	prev, ok := e.earlier[id]
	if !ok {
		return nil
	}
	delete(e.earlier, id)
	mark := model.TrialResult{Trial: prev.Trial, Start: at, End: at, Outcome: model.Cancelled,
		Reason: fmt.Sprintf("rerun by a resume from %s; it did not end (headroom stopped before it did): the trial's trace and log are that rerun's, cut short. Its earlier run ended %s", at.UTC().Format(time.RFC3339), prev.Outcome)}
	return e.Append(mark)
}

// trialDir makes the trial's directory in TrialsDir (Mkdirat, not
// MkdirAll: a removed experiment directory is never made again by the
// trace of its next trial), or opens the one an earlier run of the
// experiment made; made says it was made now. A link at its name, or a
// directory the experiment did not make (put there while the sweep
// ran), is refused.
func (e *Experiment) trialDir(id string) (td *os.File, made bool, err error) {
	name := filepath.Base(id)
	if name != id || name == "." || name == ".." {
		return nil, false, fmt.Errorf("trial id %q is not a file name", id)
	}
	err = unix.Mkdirat(int(e.trialsf.Fd()), name, 0o700)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, &os.PathError{Op: "mkdir", Path: atPath(e.trialsf, name), Err: err}
	}
	made = err == nil
	if td, err = openDirAt(e.trialsf, name); err != nil {
		return nil, false, err
	}
	id2, err := identityOf(td)
	if err != nil {
		td.Close()
		return nil, false, err
	}
	if !made && !e.ours[id2] {
		td.Close()
		return nil, false, fmt.Errorf("%s already exists, and not as a directory this experiment made (it was put there while the sweep ran): headroom writes a trial's files only into a directory it made; nothing was written into it", atPath(e.trialsf, name))
	}
	e.ours[id2] = true
	return td, made, nil
}

// closeDir closes a trial directory's handle, if any.
func closeDir(d *os.File) {
	if d != nil {
		d.Close()
	}
}

// closeTrial closes a trial's files and hands back its directory's
// handle (nil if none was open), for its trace's compaction.
func (e *Experiment) closeTrial(id string) *os.File {
	tf := e.open[id]
	if tf == nil {
		return nil
	}
	delete(e.open, id)
	tf.endStep()
	if tf.trialDrop > 0 {
		fmt.Fprintf(tf.log, "==> [headroom] %d line(s), %s of output past this log's %s were not kept\n", tf.trialDrop, model.FormatBytes(tf.trialDropB), model.FormatBytes(LogTrialBytes))
	}
	tf.samples.Flush()
	tf.log.Flush()
	tf.sf.Close()
	tf.lf.Close()
	return tf.dir
}

// limits are the memory limits a what-if prediction may test a trial of
// policy p against: the experiment's ratios' and the standard ones'.
func (e *Experiment) limits(p model.ResourcePolicy) []int64 {
	var out []int64
	for _, r := range append(slices.Clone(e.manifest.Ratios), model.StandardRatios...) {
		if l := model.MemoryLimitAt(p, r); l > 0 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// MaxRecordBytes is the most a trial's record line may be: half what a
// reader takes (maxStoreFile), so a record written is always read.
const MaxRecordBytes = maxStoreFile / 2

// Append writes one trial record and syncs it to disk.
func (e *Experiment) Append(r model.TrialResult) error {
	if r.Experiment == "" {
		r.Experiment = e.manifest.ID
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) > MaxRecordBytes {
		// Too large for a reader (which refuses the whole file at a line
		// past maxStoreFile): its detail is left out, its verdict kept.
		fits := r.CutToFit(MaxRecordBytes, func(c *model.TrialResult) int {
			b, err = json.Marshal(c)
			return len(b)
		})
		if err != nil {
			return err
		}
		if !fits {
			return fmt.Errorf("append %s: trial %s's record is %d bytes even without its detail, over the %d a record may be", TrialsFile, r.ID, len(b), MaxRecordBytes)
		}
	}
	// A record that does not fit (a full disk) is taken back whole: no
	// torn line is left for a reader or the next record.
	var size int64 = -1
	if st, err := e.trials.Stat(); err == nil {
		size = st.Size()
	}
	if err := e.checkSize(size); err != nil {
		return err
	}
	if _, err := e.trials.Write(append(b, '\n')); err != nil {
		if size >= 0 {
			_ = e.trials.Truncate(size)
		}
		return fmt.Errorf("append %s: %w", TrialsFile, err)
	}
	if err := e.trials.Sync(); err != nil {
		if size >= 0 {
			_ = e.trials.Truncate(size)
		}
		return fmt.Errorf("append %s: %w", TrialsFile, err)
	}
	e.written = size + int64(len(b)) + 1
	// Its summary row follows it; a crash between the two leaves a
	// record with no row, which readers notice (readSummary).
	if size >= 0 {
		e.appendSummary(b, TrialLine{Off: size, Len: len(b), Line: e.nextLine})
	} else {
		e.dropSummary()
	}
	e.nextLine++
	return nil
}

// Close flushes and closes every open file and waits for the traces
// being compacted.
func (e *Experiment) Close() error {
	for id := range e.open {
		closeDir(e.closeTrial(id))
	}
	e.compacting.Wait()
	if e.summary != nil {
		e.summary.Close()
	}
	err := e.trials.Close()
	e.closeDirs()
	e.lock.Unlock()
	return err
}

// Gone is why the experiment stopped being written (its directory
// removed or moved), or nil.
func (e *Experiment) Gone() error {
	if e.gone == nil {
		return nil
	}
	return e.gone
}

// ReadTrials reads trials.jsonl. A torn last line (a crash mid-write) is
// skipped and reported in torn; a bad line elsewhere is an error naming it.
// A trial recorded more than once (rerun by --resume) counts by its last
// record, in the place of its first.
func ReadTrials(dir string) (results []model.TrialResult, torn bool, err error) {
	return readTrials(dir, false)
}

// ReadTrialsBrief is ReadTrials without each step's output tail (the
// bulk of a record: the same lines are in the trial's log.txt), for
// what reads a whole experiment to count, rate and browse it: the
// console's history, the report, resume's scan. Its records are skipped
// over, not decoded, so a large experiment reads faster and holds a
// fraction of the memory.
func ReadTrialsBrief(dir string) (results []model.TrialResult, torn bool, err error) {
	return readTrials(dir, true)
}

// ReadTrialsChecked is ReadTrials (brief: ReadTrialsBrief) refusing the
// first record check says is not the experiment's, naming its file and
// line (CheckRecord).
func ReadTrialsChecked(dir string, brief bool, check func(model.TrialResult) error) ([]model.TrialResult, bool, error) {
	return readTrialsChecked(dir, brief, check)
}

func readTrials(dir string, brief bool) (results []model.TrialResult, torn bool, err error) {
	results, _, torn, err = readTrialsAt(dir, brief, nil)
	return results, torn, err
}

func readTrialsChecked(dir string, brief bool, check func(model.TrialResult) error) (results []model.TrialResult, torn bool, err error) {
	results, _, torn, err = readTrialsAt(dir, brief, check)
	return results, torn, err
}

// TrialLine is where a trial's record sits in trials.jsonl: the line's
// offset and length, its newline left out.
type TrialLine struct {
	Off int64
	Len int
	// Line is its line number, from 1.
	Line int
}

// ReadTrialsBriefLines is ReadTrialsBrief with each record's place in
// the file, for CopyTrialLines: a report that carries every record as
// written copies the lines rather than decoding them whole and encoding
// them again (an experiment of tens of thousands of trials is hundreds
// of MB of records, most of it the steps' output). It refuses the first
// record check (when not nil) says is not the experiment's, naming its
// file and line (CheckRecord).
func ReadTrialsBriefLines(dir string, check func(model.TrialResult) error) (results []model.TrialResult, lines []TrialLine, torn bool, err error) {
	return readTrialsAt(dir, true, check)
}

func readTrialsAt(dir string, brief bool, check func(model.TrialResult) error) (results []model.TrialResult, lines []TrialLine, torn bool, err error) {
	results, lines, torn, err = readTrialLines(dir, brief, check)
	if err != nil {
		return nil, nil, false, err
	}
	results, lines = latestByID(results, lines)
	if err := oneRecordPerRepeat(dir, results, lines); err != nil {
		return nil, nil, false, err
	}
	return results, lines, torn, nil
}

// oneRecordPerRepeat refuses two trials (two ids) of one cell (task,
// agent, column) and repeat that both count: a plan gives a cell's
// repeat one id, and resume reruns an infra-error or a cancelled trial
// under that id (latestByID keeps its last record), so a second id is a
// line headroom did not write (hand-appended, or pasted from another
// run), and the report would count one trial twice. A cancelled record
// counts in no rate and is left alone. Records of no id or repeat
// (before either was kept) are not compared.
func oneRecordPerRepeat(dir string, results []model.TrialResult, lines []TrialLine) error {
	type repeatOf struct {
		task, agent string
		ratio       model.Ratio
		repeat      int
	}
	seen := make(map[repeatOf]int, len(results))
	for i, r := range results {
		if r.ID == "" || r.Repeat < 1 || !r.Outcome.Counted() {
			continue
		}
		k := repeatOf{r.Task, r.Agent, r.Ratio, r.Repeat}
		j, ok := seen[k]
		if !ok {
			seen[k] = i
			continue
		}
		first := results[j]
		return fmt.Errorf("%s:%d: trial %s is %s · %s at %s, repeat %d, as trial %s (line %d) is: one repeat of a cell recorded twice under two ids (headroom gives each its own; a rerun keeps its id), so the score would count it twice; a hand-appended or pasted line: remove the one that is not the run's",
			filepath.Join(dir, TrialsFile), lines[i].Line, r.ID, r.Task, r.Agent, r.Ratio, r.Repeat, first.ID, lines[j].Line)
	}
	return nil
}

// latestByID keeps a trial recorded more than once by its last record,
// in the place of its first.
func latestByID(results []model.TrialResult, lines []TrialLine) ([]model.TrialResult, []TrialLine) {
	at := map[string]int{}
	out, outLines := results[:0], lines[:0]
	for i, r := range results {
		if j, ok := at[r.ID]; ok && r.ID != "" {
			out[j], outLines[j] = r, lines[i]
			continue
		}
		at[r.ID] = len(out)
		out, outLines = append(out, r), append(outLines, lines[i])
	}
	return out, outLines
}

// CopyTrialLines calls each with the raw record at every line, in order,
// reading one line at a time: what each is given is only valid during
// the call.
func CopyTrialLines(dir string, lines []TrialLine, each func(raw []byte) error) error {
	f, err := openRegular(filepath.Join(dir, TrialsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	var buf []byte
	for _, l := range lines {
		if cap(buf) < l.Len {
			buf = make([]byte, l.Len)
		}
		buf = buf[:l.Len]
		if _, err := f.ReadAt(buf, l.Off); err != nil {
			return fmt.Errorf("%s: read the record at byte %d: %w (was the file changed while it was read?)", f.Name(), l.Off, err)
		}
		if err := each(buf); err != nil {
			return err
		}
	}
	return nil
}

// readTrialLines reads the records one line at a time (an experiment of
// tens of thousands of trials is hundreds of MB: it is never held whole).
func readTrialLines(dir string, brief bool, check func(model.TrialResult) error) (results []model.TrialResult, lines []TrialLine, torn bool, err error) {
	path := filepath.Join(dir, TrialsFile)
	f, err := openRegular(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var long []byte
	var off int64
	for i := 1; ; i++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: gathered in its own.
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
				if len(long) > maxStoreFile {
					return nil, nil, false, fmt.Errorf("%s:%d: a line longer than %d MiB: not a record headroom wrote", path, i, maxStoreFile>>20)
				}
			}
			line = long
		}
		last := err != nil // no newline: the file's end (a torn line, if bad)
		if err != nil && err != io.EOF {
			return nil, nil, false, err
		}
		at := TrialLine{Off: off, Len: len(bytes.TrimRight(line, "\r\n")), Line: i}
		off += int64(len(line))
		if len(bytes.TrimSpace(line)) > 0 {
			if brief {
				line = withoutOutput(line)
			}
			var r model.TrialResult
			if err := json.Unmarshal(line, &r); err != nil {
				if last {
					return results, lines, true, nil
				}
				return nil, nil, false, fmt.Errorf("%s:%d: %v", path, i, err)
			}
			if check != nil {
				if err := check(r); err != nil {
					return nil, nil, false, fmt.Errorf("%s:%d: trial %s: %v", path, i, r.ID, err)
				}
			}
			if brief {
				shrink(&r)
			}
			results = append(results, r)
			lines = append(lines, at)
		}
		if last {
			return results, lines, false, nil
		}
	}
}

// CheckRecord says why a record is not one of m's trials (a hand-edited
// line, or one pasted from another experiment), or nil: its task and
// ratio must be among m's, its repeat within m's, the experiment it
// names (records before there was one name none) m, and it cannot end
// before it starts. Its agent is not checked: a task lacking the agent
// asked for is planned with it, while its entry lists those it has.
func CheckRecord(m Manifest) func(model.TrialResult) error {
	ratios := map[string]bool{}
	var names []string
	for _, r := range m.Ratios {
		ratios[r.String()] = true
		names = append(names, r.String())
	}
	tasks := map[string]bool{}
	for _, t := range m.Tasks {
		tasks[t.Name] = true
	}
	return func(r model.TrialResult) error {
		if len(ratios) > 0 && !ratios[r.Ratio.String()] {
			return fmt.Errorf("ratio %s is not one of this experiment's (%s): a hand-edited record; restore the line or remove it", r.Ratio, strings.Join(names, ", "))
		}
		if len(tasks) > 0 && !tasks[r.Task] {
			return fmt.Errorf("task %q is not one of this experiment's: a record from another experiment, or hand-edited; remove the line", r.Task)
		}
		if m.Repeats > 0 && (r.Repeat < 1 || r.Repeat > m.Repeats) {
			return fmt.Errorf("repeat %d is not within this experiment's 1-%d: remove the line", r.Repeat, m.Repeats)
		}
		if r.Experiment != "" && r.Experiment != m.ID {
			return fmt.Errorf("it was written to experiment %s, not this one (%s): a record from another experiment; remove the line", r.Experiment, m.ID)
		}
		if !r.Start.IsZero() && !r.End.IsZero() && r.End.Before(r.Start) {
			return fmt.Errorf("it ends (%s) %s before it starts (%s): a hand-edited time; restore the line or remove it", r.End.Format(time.RFC3339Nano), r.Start.Sub(r.End).Round(time.Millisecond), r.Start.Format(time.RFC3339Nano))
		}
		return nil
	}
}

// shrink makes a brief record hold what it needs and no more: the steps'
// output goes (what withoutOutput could not cut: a key spelt otherwise),
// the strings repeated across trials (task, agent, step names and
// commands, processes' command lines) share one copy, and the slices
// that decoding grew by doubling are cut to their length.
func shrink(r *model.TrialResult) {
	in := func(s *string) { *s = unique.Make(*s).Value() }
	for _, s := range []*string{&r.Task, &r.Agent, &r.Profile, &r.SampleSource, &r.StepRunner, &r.Verdict, &r.KilledInStep, &r.Reason} {
		in(s)
	}
	r.Steps = slices.Clone(r.Steps)
	for j := range r.Steps {
		s := &r.Steps[j]
		s.Output = ""
		in(&s.Name)
		in(&s.Show)
		in(&s.Phase)
	}
	r.Activities = slices.Clone(r.Activities)
	for j := range r.Activities {
		in(&r.Activities[j].Step)
		in(&r.Activities[j].Command)
	}
	for j := range r.OOMs {
		in(&r.OOMs[j].Step)
		in(&r.OOMs[j].Source)
		in(&r.OOMs[j].Process)
	}
}

var outputKey = []byte(`"output":"`)

// withoutOutput cuts every step's "output" member out of a record's
// line (in place), so the decoder neither scans nor keeps it. The key
// can only be a member's name: inside a JSON string its quotes would be
// escaped. A line it cannot cut cleanly is returned as it is.
func withoutOutput(line []byte) []byte {
	out := line[:0]
	rest := line
	for {
		i := bytes.Index(rest, outputKey)
		if i < 1 || (rest[i-1] != ',' && rest[i-1] != '{') {
			if i >= 1 {
				// Not a member: keep it and look further on.
				out = append(out, rest[:i+len(outputKey)]...)
				rest = rest[i+len(outputKey):]
				continue
			}
			return append(out, rest...)
		}
		// The string's end: the first quote not escaped.
		j := i + len(outputKey)
		for j < len(rest) && rest[j] != '"' {
			if rest[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(rest) {
			return append(out, rest...)
		}
		j++ // past the closing quote
		if rest[i-1] == ',' {
			out = append(out, rest[:i-1]...) // drop the comma before
		} else {
			out = append(out, rest[:i]...)
			if j < len(rest) && rest[j] == ',' {
				j++ // first member: drop the comma after
			}
		}
		rest = rest[j:]
	}
}

// ReadManifest reads an experiment's manifest.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := readRegular(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// Browse reads a finished or interrupted experiment to look at: its
// plan (the manifest's, with the trials that have records) and its
// trials as their summary rows have them (Summarize), as the console
// opens it.
func Browse(dir string, m Manifest) (model.Plan, []model.TrialResult, error) {
	plan, results, _, err := BrowseRecords(dir, m)
	return plan, results, err
}

// BrowseRecords is Browse with a reader of one trial's record (without
// its steps' output), for its detail.
func BrowseRecords(dir string, m Manifest) (model.Plan, []model.TrialResult, func(trialID string) (model.TrialResult, error), error) {
	results, lines, _, err := ReadTrialsSummary(dir, nil)
	if err != nil {
		return model.Plan{}, nil, nil, err
	}
	plan := model.Plan{Seed: m.Seed, Repeats: m.Repeats, Ratios: m.Ratios, Trials: make([]model.Trial, 0, len(results))}
	at := make(map[string]TrialLine, len(results))
	for i, r := range results {
		plan.Trials = append(plan.Trials, r.Trial)
		at[r.ID] = lines[i]
	}
	record := func(id string) (model.TrialResult, error) {
		l, ok := at[id]
		if !ok {
			return model.TrialResult{}, fmt.Errorf("trial %s has no record in %s", id, filepath.Join(dir, TrialsFile))
		}
		r, err := ReadRecord(dir, l)
		if err == nil && r.ID != id {
			err = fmt.Errorf("%s:%d: trial %s, not %s: was the file changed since it was opened?", filepath.Join(dir, TrialsFile), l.Line, r.ID, id)
		}
		return r, err
	}
	return plan, results, record, nil
}

// readListing reads a manifest for a listing: every field but the tasks'
// details (their policies, images, deviations), which are most of a
// large sweep's manifest and are skipped over, not decoded.
func readListing(dir string) (Manifest, error) {
	var l struct {
		Manifest
		Tasks []struct {
			Name string `json:"name"`
		} `json:"tasks"`
	}
	b, err := readRegular(filepath.Join(dir, ManifestFile))
	if err != nil {
		return Manifest{}, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return Manifest{}, fmt.Errorf("%s: %v", filepath.Join(dir, ManifestFile), err)
	}
	m := l.Manifest
	m.Tasks = make([]TaskEntry, len(l.Tasks))
	for i, t := range l.Tasks {
		m.Tasks[i].Name = t.Name
	}
	return m, nil
}

// DefaultRoot is where experiments go without --out.
func DefaultRoot() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "headroom", "experiments")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "headroom", "experiments")
	}
	return filepath.Join(".", "headroom-experiments")
}

// Summary is one experiment in the store's listing.
type Summary struct {
	Dir      string
	Manifest Manifest
}

// List reads every experiment under root, newest first. Directories
// without a readable manifest are skipped. Each manifest's tasks carry
// their names only (what a listing shows): ReadManifest reads one whole.
func List(root string) ([]Summary, error) {
	entries, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Summary
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		m, err := readListing(dir)
		if err != nil {
			continue
		}
		out = append(out, Summary{Dir: dir, Manifest: m})
	}
	return out, nil
}

// ReadTrace reads one trial's memory samples and log. The samples are
// the compacted trace of a finished trial (samples.hrt) or the
// full-resolution CSV of one still running, cut short by a crash, or
// written by an older headroom.
func ReadTrace(dir, trialID string) ([]event.Sample, []string, error) {
	tdir := filepath.Join(dir, TrialsDir, filepath.Base(trialID))
	samples, err := readSamples(tdir)
	if err != nil {
		return nil, nil, err
	}
	var log []string
	if b, err := readRegular(filepath.Join(tdir, "log.txt")); err == nil {
		log = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	}
	return samples, log, nil
}
