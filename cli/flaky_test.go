package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/report"
)

// The flaky example (a Harbor task whose size is drawn from os.urandom on
// every run, no seed): report's matrix and variance table and calibrate
// count the same memory failures; calibrate says its repeats are drawn;
// and after calibrate --write on its task.toml, 20 runs at 1x fail at the
// limit at most the target share. The target is 5%: 60 drawn runs can
// speak to it (59 with none over a limit show it); a 1% target needs 299,
// and from 20 the limit sat on the largest need those few draws happened
// to reach (464 MiB against a need that goes to ~480: 1 of 20 killed).
func TestFlakyRandomSizeTaskFromFailuresToAFixedLimit(t *testing.T) {
	needEngine(t)
	needDebianImage(t)
	tasks := t.TempDir()
	if out, err := exec.Command("cp", "-r", "../examples/tasks/flaky-random-size", tasks).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	root := t.TempDir()
	r := headroom(t, "run", "--tasks-dir", tasks, "--tasks", "flaky-random-size", "--agents", "oracle", "--ratios", "1,uncapped", "--repeats", "30", "--format", "json", "--out", root)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var doc report.JSONReport
	if err := report.ReadJSON([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	noContainersLeft(t, doc.Experiment)
	var tally model.MemoryFailures // as focus counts
	for _, tr := range doc.Trials {
		if tr.Ratio == (model.Ratio{K: 1}) {
			tally.AddTrial(tr)
		}
	}
	matrix := doc.Cells[0].MemoryFailures
	if doc.Cells[0].Ratio != (model.Ratio{K: 1}) || matrix != tally || doc.Ratios[0].MemoryFailures != tally {
		t.Errorf("matrix %+v, ratio %+v, focus's tally %+v", matrix, doc.Ratios[0].MemoryFailures, tally)
	}
	if v := doc.Variance[0]; v.Killed != tally.Killed || v.Stalled != tally.Stalled {
		t.Errorf("variance %d killed %d stalled, tally %+v", v.Killed, v.Stalled, tally)
	}
	if doc.WhatIf != nil && len(doc.WhatIf.Accuracy) != 0 {
		t.Errorf("a task that draws its size is scored trial by trial: %+v", doc.WhatIf.Accuracy)
	}
	cal := headroom(t, "calibrate", doc.Experiment, "--out", root, "--target", "0.05", "--write")
	wantKills := fmt.Sprintf("1x %d/%d", tally.Failed(), tally.Counted)
	if cal.code != 0 || !strings.Contains(cal.stdout, wantKills) || !strings.Contains(cal.stdout, " drawn ") || !strings.Contains(cal.stderr, "wrote ") {
		t.Fatalf("calibrate: exit %d, want %q and drawn repeats\n%s%s", cal.code, wantKills, cal.stdout, cal.stderr)
	}
	file := filepath.Join(tasks, "flaky-random-size", "task.toml")
	data, _ := os.ReadFile(file)
	m := regexp.MustCompile(`(?m)^memory_mb = (\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no memory_mb in\n%s", data)
	}
	t.Logf("calibrated memory_mb = %s (1x before: %s)", m[1], tally)
	again := headroom(t, "run", "--tasks-dir", tasks, "--tasks", "flaky-random-size", "--agents", "oracle", "--ratios", "1", "--repeats", "20", "--format", "json", "--out", root)
	if again.code != 0 {
		t.Fatalf("rerun: exit %d\n%s", again.code, again.stderr)
	}
	var after report.JSONReport
	if err := report.ReadJSON([]byte(again.stdout), &after); err != nil {
		t.Fatal(err)
	}
	noContainersLeft(t, after.Experiment)
	// At most the target share: a rate the 20 reruns show above 5% with
	// 95% confidence (Wilson's low end over it: 3 or more of 20) fails.
	if mf := after.Ratios[0].MemoryFailures; mf.Counted < 20 || model.Wilson(mf.Failed(), mf.Counted).Lo > 0.05 {
		t.Errorf("at the calibrated memory_mb %s, 1x failed at the limit %s: more than the 5%% target", m[1], mf)
	}
}
