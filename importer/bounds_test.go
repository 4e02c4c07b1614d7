package importer

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A result.json that is the same file in two trial directories (a hard
// link) is one trial given twice: refused naming both, before it is
// parsed again.
func TestHarborResultLinkedIntoTwoTrialsIsRefused(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job")
	if err := os.CopyFS(job, os.DirFS("testdata/harbor/tb2-docker-1x")); err != nil {
		t.Fatal(err)
	}
	results, _ := filepath.Glob(filepath.Join(job, "*", "result.json"))
	sort.Strings(results)
	if err := os.Remove(results[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(results[0], results[1]); err != nil {
		t.Fatal(err)
	}
	_, err := Harbor([]string{job}, Options{})
	if err == nil || !strings.Contains(err.Error(), results[1]+" is the same file as "+results[0]) {
		t.Errorf("import: %v", err)
	}
}

// A results.json of more records than an import takes is refused by
// name, not held and written (400,000 took 2.0 GB and 639 MB of store).
func TestTerminalBenchRunOfTooManyTrialsIsRefused(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	var b strings.Builder
	b.WriteString(`{"id": "r", "results": [`)
	for i := range MaxTrials + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"task_id": "t", "trial_name": "t.1-of-1.r", "is_resolved": true}`)
	}
	b.WriteString(`]}`)
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "results.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := TerminalBench([]string{run}, Options{})
	if err == nil || !strings.Contains(err.Error(), "50001 trials, more than an import takes (50000)") {
		t.Errorf("import: %v", err)
	}
}

// A Harbor job of more trials than an import takes stops being read at
// the bound: every trial parsed is held until the experiment is written.
func TestHarborJobPastTheBoundStopsBeingRead(t *testing.T) {
	old := maxTrials
	maxTrials = 5
	t.Cleanup(func() { maxTrials = old })
	job := filepath.Join(t.TempDir(), "job")
	if err := os.CopyFS(job, os.DirFS("testdata/harbor/tb2-docker-1x")); err != nil {
		t.Fatal(err)
	}
	j, probs := readHarborJob(job)
	if len(j.results) != 5 || len(probs) != 1 || !strings.Contains(probs[0], "6 trials, more than an import takes (5)") {
		t.Errorf("read %d trials, problems %q; want 5 read and the bound said", len(j.results), probs)
	}
}
