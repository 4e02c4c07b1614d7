package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Two Harbor jobs at two resource settings, imported: one experiment whose
// matrix has both as ratios, a paired comparison with noise labels, a
// report that says what was imported and what Harbor does not record,
// and a compare against one of headroom's own runs of the same tasks.
// Bad directories are one line each, and nothing is written.
func TestImportHarborJobsThenReportAndCompare(t *testing.T) {
	root := t.TempDir()
	jobs := []string{"../importer/testdata/harbor/tb2-docker-1x", "../importer/testdata/harbor/tb2-gke-3x"}
	r := headroom(t, append([]string{"import", "harbor", "--out", root}, jobs...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "imported 36 trials") || !strings.Contains(r.stdout, "3x         18 trials") {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyExperiment(t, root)
	id := filepath.Base(dir)
	rep := headroom(t, "report", "--out", root, id)
	for _, want := range []string{"1x", "3x", "success rate", "Against 1x, paired by task", "noise", "Imported (headroom import)", "gke, memory_limit_multiplier=3", "not recorded by the harness, so not in this report: memory trace, kernel peak",
		"its own score: mean reward 66.67% (12 of 18), from result.json stats.n_trials, evals.*.metrics mean, reward_stats · headroom: 12 of 18 passed (66.67%): the same",
		"its own score: mean reward 66.67% (12 of 18), from result.json stats.n_completed_trials, evals.*.metrics mean, reward_stats · headroom: 12 of 18 passed (66.67%): the same"} {
		if !strings.Contains(rep.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, rep.stdout)
		}
	}
	// An imported run has no memory readings: calibrate says so, where it
	// recommended 0 B.
	if cal := headroom(t, "calibrate", "--out", root, id); cal.code != 2 || !strings.Contains(cal.stderr, "imported from harbor (2 jobs)") || strings.Contains(cal.stdout, "0 B") {
		t.Errorf("calibrate of an imported run: exit %d\n%s%s", cal.code, cal.stdout, cal.stderr)
	}
	// headroom's own run of the same tasks (records as a run writes them).
	own := ownRun(t, root)
	cmp := headroom(t, "compare", "--out", root, id, own)
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "Setups differ") || !strings.Contains(cmp.stdout, "engine") || !strings.Contains(cmp.stdout, "noise") {
		t.Errorf("compare: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	if !regexp.MustCompile(`(?m)^1x +success`).MatchString(cmp.stdout) || !regexp.MustCompile(`(?m)^3x +success`).MatchString(cmp.stdout) || !strings.Contains(cmp.stdout, "A imported from harbor") {
		t.Errorf("compare does not pair both ratios:\n%s", cmp.stdout)
	}

	// A terminal-bench run: its accuracy (n_resolved over every record,
	// the error record without times included) is headroom's.
	tb := headroom(t, "import", "terminal-bench", "--out", root, "../importer/testdata/tb1/2026-11-23__09-00-00")
	if tb.code != 0 || !strings.Contains(tb.stdout, "imported 6 trials") || !strings.Contains(tb.stdout, "its own score: accuracy 50.00% (3 of 6), from results.json accuracy, n_resolved · headroom: 3 of 6 passed (50.00%): the same") {
		t.Fatalf("import terminal-bench: exit %d\n%s%s", tb.code, tb.stdout, tb.stderr)
	}
	tbID := regexp.MustCompile(`as experiment (\S+)`).FindStringSubmatch(tb.stdout)
	if tbID == nil {
		t.Fatalf("no experiment id in %q", tb.stdout)
	}
	if rep := headroom(t, "report", "--out", root, tbID[1]); !strings.Contains(rep.stdout, "its own score: accuracy 50.00% (3 of 6), from results.json accuracy, n_resolved · headroom: 3 of 6 passed (50.00%): the same") {
		t.Errorf("terminal-bench report:\n%s%s", rep.stdout, rep.stderr)
	}

	bad := t.TempDir()
	b := headroom(t, "import", "harbor", "--out", bad, "../importer/testdata/bad/empty-job", "../importer/testdata/bad/broken-json", "../importer/testdata/bad/partial")
	lines := strings.Split(strings.TrimSpace(b.stderr), "\n")
	if b.code != 2 || len(lines) != 4 || !strings.Contains(lines[3], "nothing imported: 3 problems above") {
		t.Errorf("bad directories: exit %d, stderr:\n%s\nwant 3 problem lines and the summary", b.code, b.stderr)
	}
	if entries, _ := os.ReadDir(bad); len(entries) != 0 {
		t.Errorf("a refused import left %v", entries)
	}
}

// ownRun writes an experiment as `headroom run` does, of the imported
// tasks at 1x and 3x, and returns its id.
func ownRun(t *testing.T, root string) string {
	t.Helper()
	tasks := []string{"bn-fit-modify", "largest-eigenval", "compile-compcert", "fix-git", "sqlite-with-gcov", "build-pmars"}
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	m := store.Manifest{ID: store.NewID(now), Created: now, Status: "finished", Ratios: []model.Ratio{{K: 1}, {K: 3}}, Repeats: 2,
		Engine: store.Engine{Backend: "docker", Version: "27.3"}, Host: store.Host{Hostname: "here", CPUs: 2}}
	exp, err := store.Create(root, m)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		for _, ratio := range m.Ratios {
			for rep := 1; rep <= 2; rep++ {
				n++
				out := model.Passed
				if task == "bn-fit-modify" && ratio.K == 1 {
					out = model.OOMKilled
				}
				tr := model.Trial{ID: "t" + string(rune('a'+n/26)) + string(rune('a'+n%26)), Task: "terminal-bench/" + task, Agent: "terminus-2@anthropic/claude-sonnet-4-5", Ratio: ratio, Repeat: rep, Policy: model.ResourcePolicy{Ratio: ratio}}
				if err := exp.Append(model.TrialResult{Trial: tr, Outcome: out, Start: now, End: now.Add(time.Minute), Steps: []model.StepResult{}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := exp.Close(); err != nil {
		t.Fatal(err)
	}
	return m.ID
}
