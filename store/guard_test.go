package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// recordOne records a whole trial: started, ended.
func recordOne(e *Experiment, id string) error {
	base := event.Base{Trial: id, Time: time.Now()}
	if err := e.Record(event.TrialStarted{Base: base}); err != nil {
		return err
	}
	return e.Record(event.TrialEnded{Base: base, Result: result(id, model.Passed)})
}

// A removed experiment directory is never made again: the next record
// fails naming where the records went (saved beside it, from the file
// still open), and no finished manifest appears at its path.
func TestRemovedDirectoryIsNotRecreated(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := recordOne(e, "t0001"); err != nil {
		t.Fatal(err)
	}
	// The finished trial's trace is compacted in the background: done
	// first, or the removal races its writes ("directory not empty",
	// seen once in CI).
	e.compacting.Wait()
	if err := os.RemoveAll(e.Dir); err != nil {
		t.Fatal(err)
	}
	err = recordOne(e, "t0002")
	var gone *DirGoneError
	if !errors.As(err, &gone) || gone.MovedTo != "" || gone.Records != 1 || gone.Rescued != filepath.Join(root, "exp1.rescued") {
		t.Fatalf("after rm -rf: %v (%+v)", err, gone)
	}
	if err := e.Record(event.SweepEnded{}); err == nil {
		t.Error("the sweep's end was recorded into a removed directory")
	}
	e.Close()
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the removed directory was made again: %v", err)
	}
	rs, _, err := ReadTrials(gone.Rescued)
	if m, merr := ReadManifest(gone.Rescued); err != nil || merr != nil || len(rs) != 1 || rs[0].ID != "t0001" || m.Status != "interrupted" {
		t.Errorf("rescued: %+v %v, manifest %+v %v", rs, err, m, merr)
	}
}

// A moved experiment directory is found where it went; nothing more is
// written at either place.
func TestMovedDirectoryIsNamed(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := recordOne(e, "t0001"); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(root, "elsewhere")
	e.compacting.Wait()
	if err := os.Rename(e.Dir, to); err != nil {
		t.Fatal(err)
	}
	err = recordOne(e, "t0002")
	var gone *DirGoneError
	if !errors.As(err, &gone) || gone.MovedTo != to || gone.Records != 1 || !strings.Contains(err.Error(), "moved to "+to) {
		t.Fatalf("after mv: %v (%+v)", err, gone)
	}
	e.Close()
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the moved directory was made again at its old path: %v", err)
	}
	if rs, _, _ := ReadTrials(to); len(rs) != 1 {
		t.Errorf("moved records: %+v", rs)
	}
}

// An experiment has one writer: a second open is refused naming the
// holder; once the holder dies, the lock goes with it.
func TestSecondWriterRefused(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	var held *LockedError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, "pid "+itoa(os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	// The lock file deleted (or replaced) from under its holder: the
	// lock is on the directory, and holds.
	os.Remove(filepath.Join(e.Dir, LockFile))
	os.WriteFile(filepath.Join(e.Dir, LockFile), nil, 0o600)
	if _, err := Open(e.Dir, Manifest{ID: "exp1", Status: "running"}); !errors.As(err, &held) {
		t.Fatalf("second writer after the lock file was replaced: %v", err)
	}
	e.Close()
	e2, err := Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	e2.Close()

	// A holder killed with SIGKILL leaves no lock behind.
	cmd := exec.Command("flock", e.Dir, "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		lk, err := LockExperiment(e.Dir)
		if err != nil {
			break // the child holds it
		}
		lk.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	// The group's last process (sleep) closes the lock as it exits.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lk, err := LockExperiment(e.Dir)
		if err == nil {
			lk.Unlock()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after its holder was killed: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A step printing without bound makes a log of bounded size: each step's
// first and last MiB with a line saying what was left out, and at most
// LogTrialBytes in all, counted (issue #24, item 4).
func TestLogKeepsHeadAndTail(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	base := event.Base{Trial: "t0001", Time: time.Now()}
	must := func(ev event.Event) {
		if err := e.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	must(event.TrialStarted{Base: base})
	line := strings.Repeat("y", 999)
	for step := 0; step < 12; step++ {
		must(event.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: "loud" + strconv.Itoa(step)}})
		for i := 0; i < 5000; i++ { // 5 MB a step, 60 MB in all
			must(event.OutputLine{Base: base, Stream: "stdout", Text: strconv.Itoa(i) + " " + line})
		}
		must(event.StepEnded{Base: base, Result: model.StepResult{Name: "loud" + strconv.Itoa(step)}})
	}
	must(event.TrialEnded{Base: base, Result: result("t0001", model.Passed)})
	e.Close()
	b, err := os.ReadFile(filepath.Join(e.Dir, TrialsDir, "t0001", "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if len(b) > LogTrialBytes+LogStepTailBytes+64<<10 {
		t.Errorf("log of %d bytes, want at most about %d", len(b), LogTrialBytes)
	}
	if !strings.Contains(log, "of this step's output not kept here") || !strings.Contains(log, "4999 "+line) || !strings.Contains(log, "\n0 "+line) {
		t.Error("the first step's head, note or tail is missing")
	}
	if !strings.Contains(log, "this trial's log reached 16MiB") || !strings.Contains(log, "past this log's 16MiB were not kept") || !strings.Contains(log, "==> loud11") {
		t.Errorf("no trial cap note, or a step's own lines went with the output:\n%s", log[len(log)-2000:])
	}
}

// A hand-edited record is refused naming its file and line: one pasted
// from another experiment (its seed), a ratio the experiment never ran,
// an end before its start (issue #24, item 5).
func TestCheckRecordNamesTheLine(t *testing.T) {
	ratios := []model.Ratio{{K: 1}, {K: 3}}
	m := Manifest{ID: "exp1", Status: "finished", Ratios: ratios, Repeats: 2, Seed: 5, Tasks: []TaskEntry{{Name: "t", Agents: []string{"a"}}}}
	good := func(id string, r model.Ratio, rep int) model.TrialResult {
		res := result(id, model.Passed)
		res.Ratio, res.Repeat, res.Seed = r, rep, model.TrialSeed(5, "t", "a", rep)
		res.Start = time.Now()
		res.End = res.Start.Add(time.Second)
		return res
	}
	foreign := good("t0002", ratios[0], 2)
	foreign.Experiment, foreign.Seed = "exp0", model.TrialSeed(6, "t", "a", 2)
	seven := good("t0003", model.Ratio{K: 7}, 1)
	backwards := good("t0004", ratios[1], 1)
	backwards.End = backwards.Start.Add(-111214 * time.Second)
	for _, c := range []struct {
		bad  model.TrialResult
		want string
	}{
		{foreign, "written to experiment exp0, not this one (exp1)"},
		{seven, "ratio 7x is not one of this experiment's (1x, 3x)"},
		{backwards, "before it starts"},
	} {
		root := t.TempDir()
		e, err := Create(root, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []model.TrialResult{good("t0001", ratios[0], 1), c.bad} {
			if err := e.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		e.Close()
		for _, brief := range []bool{false, true} {
			_, _, err = ReadTrialsChecked(e.Dir, brief, CheckRecord(m))
			if err == nil || !strings.Contains(err.Error(), filepath.Join(e.Dir, TrialsFile)+":2: trial "+c.bad.ID) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v", c.want, err)
			}
		}
		if _, _, err := ReadTrials(e.Dir); err != nil {
			t.Errorf("unchecked: %v", err)
		}
	}
}

// A user's file hard-linked as an experiment's lock (O_NOFOLLOW refuses
// only symbolic links) is neither truncated nor written by the writer
// that takes the lock, nor shown by a second writer that is refused; the
// directory's lock still keeps the second writer out.
func TestLockNeverWritesThroughAHardLink(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(root, "user.txt")
	const data = "IMPORTANT user data\n"
	if err := os.WriteFile(user, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(e.Dir, LockFile)
	plant := func() {
		t.Helper()
		if err := os.Remove(lock); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(user, lock); err != nil {
			t.Fatal(err)
		}
	}
	// Held: the second writer is refused, and says nothing of the file.
	plant()
	_, err = Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	var held *LockedError
	if !errors.As(err, &held) || strings.Contains(err.Error(), "IMPORTANT") {
		t.Errorf("second writer with the lock hard-linked to a user's file: %v; want refused, the file's text not shown", err)
	}
	e.Close()
	// Not held: the resume takes the lock without writing through it.
	plant()
	e2, err := Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if b, _ := os.ReadFile(user); string(b) != data {
		t.Errorf("%s after the resume took the lock: %q, want it untouched (%q)", user, b, data)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(lock, &st); err != nil || st.Nlink != 1 {
		t.Errorf("%s after the resume: nlink %d (%v), want a file of its own", lock, st.Nlink, err)
	}
	e2.Close()
	if b, _ := os.ReadFile(user); string(b) != data {
		t.Errorf("%s after the resume's unlock: %q, want it untouched", user, b)
	}
}

// headroom's own lines (each step's start and end) are bounded too:
// 82,000 steps made a 44 MB log of them alone (the thirteenth
// attacker's 3); past LogMarkBytes they are counted.
func TestLogBoundsItsOwnLines(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	base := event.Base{Trial: "t0001", Time: time.Now()}
	show := strings.Repeat("z", 1900)
	e.Record(event.TrialStarted{Base: base})
	for step := 0; step < 6000; step++ {
		name := "step" + strconv.Itoa(step)
		e.Record(event.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: name, Show: name + " " + show}})
		e.Record(event.StepEnded{Base: base, Result: model.StepResult{Name: name}})
	}
	e.Record(event.TrialEnded{Base: base, Result: result("t0001", model.Passed)})
	e.Close()
	b, err := os.ReadFile(filepath.Join(e.Dir, TrialsDir, "t0001", "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > LogMarkBytes+64<<10 || !strings.Contains(string(b), "of headroom's own lines") || !strings.Contains(string(b), "==> [agent] step0") {
		t.Errorf("log of %d bytes (want at most about %d), its first step and the cap said", len(b), LogMarkBytes)
	}
}

// What the runner never sent of a step's output (event.OutputLine's
// Skipped) is counted with what the log left out, and a live line, sent
// again with the step's tail, is not written twice.
func TestLogCountsWhatTheRunnerSkipped(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	base := event.Base{Trial: "t0001", Time: time.Now()}
	for _, ev := range []event.Event{
		event.TrialStarted{Base: base},
		event.StepStarted{Base: base, Phase: "agent", Step: model.Step{Name: "yes"}},
		event.OutputLine{Base: base, Stream: "stdout", Text: "head"},
		event.OutputLine{Base: base, Stream: "stdout", Text: "live y", Live: true},
		event.OutputLine{Base: base, Stream: "stdout", Text: "tail", Skipped: 49_000_000, SkippedBytes: 98_000_000},
		event.StepEnded{Base: base, Result: model.StepResult{Name: "yes"}},
		event.TrialEnded{Base: base, Result: result("t0001", model.Passed)},
	} {
		if err := e.Record(ev); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	b, err := os.ReadFile(filepath.Join(e.Dir, TrialsDir, "t0001", "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if strings.Contains(log, "live y") || !strings.Contains(log, "head\n") || !strings.Contains(log, "tail\n") || !strings.Contains(log, "49000000 line(s), 93.5MiB of this step's output not kept here") {
		t.Errorf("log:\n%s", log)
	}
}
