package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// A step that prints without bound gets a record of bounded size: its
// first lines, a line saying what was left out, its last lines; a long
// line is cut; a traced script of many loud commands shares one budget
// per trial; every byte left out is counted (issue #24, item 4).
func TestOutputKeptWithinBounds(t *testing.T) {
	long := strings.Repeat("x", 50_000)
	var loud []string
	for i := 0; i < 20_000; i++ {
		loud = append(loud, fmt.Sprintf("line %05d %s", i, strings.Repeat("y", 900)))
	}
	traced := []string{"!" + traceLine(1, "echo "+strings.Repeat("z", 1<<20))}
	for c := 0; c < 40; c++ {
		traced = append(traced, "!"+traceLine(1, fmt.Sprintf("yes %d", c)))
		traced = append(traced, loud[:600]...)
	}
	tasks := []model.Task{fake.Task("loud", 64<<20, "solve"), fake.Task("traced", 64<<20, "solve")}
	tasks[1].Agents[0].Steps[0].Trace = true
	b := &fake.Backend{Script: stripBang(script(map[string]fake.StepPlan{
		"loud/solve":   {Lines: append(append([]string{long}, loud...), "the end")},
		"traced/solve": {Lines: traced},
	}))}
	res := runSweep(t, b, config(t, tasks), context.Background(), nil).results
	r := res["loud@1x"]
	s := r.Steps[0]
	lines := strings.Split(s.Output, "\n")
	if len(lines) != runner.StepHeadLines+200+1 || !strings.HasPrefix(lines[0], "xxx") || len(lines[0]) > runner.OutputLineBytes+4 ||
		!strings.HasPrefix(lines[runner.StepHeadLines], "[headroom: ") || lines[len(lines)-1] != "the end" {
		t.Errorf("kept %d lines: first %.40q, at the head's end %.80q, last %q", len(lines), lines[0], lines[min(runner.StepHeadLines, len(lines)-1)], lines[len(lines)-1])
	}
	wantLines := 20_002 - runner.StepHeadLines - 200
	if s.OutputDropped != wantLines || s.OutputDroppedBytes < int64(wantLines*900) || r.OutputDroppedBytes != s.OutputDroppedBytes {
		t.Errorf("dropped %d lines, %d bytes (trial %d); want %d lines", s.OutputDropped, s.OutputDroppedBytes, r.OutputDroppedBytes, wantLines)
	}
	tr := res["traced@1x"]
	rec, _ := json.Marshal(tr)
	kept := 0
	for _, s := range tr.Steps {
		kept += len(s.Output)
		if len(s.Show) > runner.OutputLineBytes+4 {
			t.Errorf("a step's command kept whole: %d bytes", len(s.Show))
		}
	}
	if len(tr.Steps) < 40 || kept > runner.TrialOutputBytes+len(tr.Steps)*400 || len(rec) > 2*runner.TrialOutputBytes || tr.OutputDroppedBytes < 20*600*900 {
		t.Errorf("traced: %d steps kept %d bytes of output, record %d bytes, %d bytes dropped", len(tr.Steps), kept, len(rec), tr.OutputDroppedBytes)
	}
}
