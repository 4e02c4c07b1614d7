package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// runTrial records one whole trial of id (started, a line of output, a
// sample, ended), stopping at the first error.
func runTrial(e *Experiment, id string) error {
	base := event.Base{Trial: id, Time: time.Now()}
	for _, ev := range []event.Event{
		event.TrialStarted{Base: base},
		event.OutputLine{Base: base, Step: "s", Stream: "stdout", Text: "the trial's output"},
		event.MemorySample{Base: base, Sample: event.Sample{Time: time.Now(), WorkingSetBytes: 1000}},
		event.TrialEnded{Base: base, Result: result(id, model.Passed)},
	} {
		if err := e.Record(ev); err != nil {
			return err
		}
	}
	return nil
}

// outsideWith makes a directory outside the experiment holding
// victim.txt, the user's file a planted link points at.
func outsideWith(t *testing.T) (dir, victim string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "outside")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	victim = filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("IMPORTANT user data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, victim
}

func assertUntouched(t *testing.T, outside, victim string) {
	t.Helper()
	if b, _ := os.ReadFile(victim); string(b) != "IMPORTANT user data\n" {
		t.Errorf("the user's file was written through the link: %q", b)
	}
	names, _ := os.ReadDir(outside)
	if len(names) != 1 {
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		t.Errorf("files written outside the experiment: %v", got)
	}
}

// A link planted in trials/ as a trial's directory, or a directory put
// there holding a link as the trial's log: nothing is written through
// either, the trial is refused naming the path, and nothing more is
// written (the sweep stops).
func TestPlantedTrialLinksAreRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, tdir, outside, victim string)
		want  string
	}{
		{"the trial's directory a link", func(t *testing.T, tdir, outside, victim string) {
			if err := os.Symlink(outside, tdir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"a directory not the experiment's, its log.txt a link", func(t *testing.T, tdir, outside, victim string) {
			if err := os.Mkdir(tdir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(tdir, "log.txt")); err != nil {
				t.Fatal(err)
			}
		}, "not as a directory this experiment made"},
	} {
		t.Run(c.name, func(t *testing.T) {
			outside, victim := outsideWith(t)
			root := t.TempDir()
			e, err := Create(root, Manifest{ID: "exp", Status: "running"})
			if err != nil {
				t.Fatal(err)
			}
			if err := runTrial(e, "t0001"); err != nil {
				t.Fatal(err)
			}
			tdir := filepath.Join(root, "exp", TrialsDir, "t0002")
			c.plant(t, tdir, outside, victim)
			err = runTrial(e, "t0002")
			if err == nil || !strings.Contains(err.Error(), tdir) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("a trial into the planted %s: %v, want an error naming it (%q)", tdir, err, c.want)
			}
			if err := runTrial(e, "t0003"); err == nil {
				t.Error("the next trial was written after the refusal")
			}
			e.Close()
			assertUntouched(t, outside, victim)
		})
	}
}

// startedTrial is a new experiment ("exp") whose first trial, t0001,
// has started: the experiment, its directory and the trial's event base.
func startedTrial(t *testing.T) (*Experiment, string, event.Base) {
	t.Helper()
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	base := event.Base{Trial: "t0001", Time: time.Now()}
	if err := e.Record(event.TrialStarted{Base: base}); err != nil {
		t.Fatal(err)
	}
	return e, filepath.Join(root, "exp"), base
}

// A trial run again by a resume writes into its own directory from the
// run before; a link left among its files there is unlinked, not
// written through.
func TestResumeRewritesItsTrialNotThroughALink(t *testing.T) {
	outside, victim := outsideWith(t)
	e, dir, _ := startedTrial(t)
	e.Close() // a run interrupted in its first trial
	var err error
	log := filepath.Join(dir, TrialsDir, "t0001", "log.txt")
	os.Remove(log)
	if err := os.Symlink(victim, log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, ManifestFile+".tmp")); err != nil {
		t.Fatal(err)
	}
	e, err = Open(dir, Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runTrial(e, "t0001"); err != nil {
		t.Fatalf("the resumed trial in its own directory: %v", err)
	}
	e.Close()
	assertUntouched(t, outside, victim)
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "the trial's output") {
		t.Errorf("the resumed trial's log: %q", b)
	}
}

// replaceFile's temporary file, a link planted at its name, is
// unlinked, not written through.
func TestReplaceFileNotThroughALink(t *testing.T) {
	outside, victim := outsideWith(t)
	dir := t.TempDir()
	p := filepath.Join(dir, SummaryFile)
	if err := os.Symlink(victim, p+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(p, []byte("rows\n")); err != nil {
		t.Fatal(err)
	}
	assertUntouched(t, outside, victim)
	if b, _ := os.ReadFile(p); string(b) != "rows\n" {
		t.Errorf("%s: %q", p, b)
	}
}

// trials.jsonl cut while the sweep runs: the next append is refused,
// saying how much was written and how much is left, and nothing more is
// written.
func TestTrialsFileCutStopsTheSweep(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	for _, id := range []string{"t0001", "t0002"} {
		if err := runTrial(e, id); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(root, "exp", TrialsFile)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	err = runTrial(e, "t0003")
	if err == nil || !strings.Contains(err.Error(), "was cut to 0 bytes") || !strings.Contains(err.Error(), p) {
		t.Fatalf("a trial after trials.jsonl was cut: %v", err)
	}
	if err := e.Append(result("t0004", model.Passed)); err == nil {
		t.Error("a record appended after the cut")
	}
	if st, _ := os.Stat(p); st.Size() != 0 {
		t.Errorf("written to the cut file: %d bytes", st.Size())
	}
	e.Close()
	// A resume appends to the file as it is now.
	e, err = Open(filepath.Join(root, "exp"), Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runTrial(e, "t0001"); err != nil {
		t.Errorf("the resume's trial: %v", err)
	}
}

// A trial a resume runs again, whose rerun headroom did not live to end:
// the record that counts says its files hold that rerun's partial trace,
// not the earlier run's ending (which stood beside them before). A rerun
// that ends is recorded as itself.
func TestRerunCutShortIsSaidByItsRecord(t *testing.T) {
	e, dir, base := startedTrial(t)
	if err := e.Record(event.TrialEnded{Base: base, Result: result("t0001", model.InfraError)}); err != nil {
		t.Fatal(err)
	}
	if err := runTrial(e, "t0002"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	// The resume reruns t0001 and dies mid-trial (no TrialEnded).
	var err error
	e, err = Open(dir, Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	rerun := event.Base{Trial: "t0001", Time: time.Now()}
	if err := e.Record(event.TrialStarted{Base: rerun}); err != nil {
		t.Fatal(err)
	}
	if err := e.Record(event.OutputLine{Base: rerun, Step: "s", Stream: "stdout", Text: "the rerun's output"}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	recs, _, err := ReadTrials(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]model.TrialResult{}
	for _, r := range recs {
		got[r.ID] = r
	}
	if r := got["t0001"]; r.Outcome != model.Cancelled || !strings.Contains(r.Reason, "rerun") || !strings.Contains(r.Reason, "ended infra-error") {
		t.Errorf("t0001 after a rerun cut short: %s %q, want cancelled, saying the rerun was cut short", r.Outcome, r.Reason)
	}
	if r := got["t0002"]; r.Outcome != model.Passed || len(recs) != 2 {
		t.Errorf("records %d, t0002 %s: the other trial's record is untouched", len(recs), r.Outcome)
	}

	// The next resume runs it to its end: its own record counts.
	e, err = Open(dir, Manifest{ID: "exp", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runTrial(e, "t0001"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	recs, _, _ = ReadTrials(dir)
	for _, r := range recs {
		if r.ID == "t0001" && r.Outcome != model.Passed {
			t.Errorf("t0001 after a rerun that ended: %s %q, want its own record (passed)", r.Outcome, r.Reason)
		}
	}
}
