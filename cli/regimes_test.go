package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/report"
)

// The paper's two regimes read off one table, on a built-in sweep: the
// heavy install is OOM-killed at 1x and rescued at 3x (an infra failure
// turned into a pass), and heavy-strategy, which takes a lean way that
// fails its tests under any limit it can see, passes only uncapped (made
// easier between 3x and uncapped; nothing rescued there).
func TestRegimesOnABuiltinSweep(t *testing.T) {
	needEngine(t)
	// A heavy install fits its 1x limit now and then, by the kernel's own
	// variance (1 in 20-100 here; a CI run had one pass): the split below
	// is of two kills, so such a sweep is run once more.
	killed := regexp.MustCompile(`oom-killed\s+t\d+ builtin/bn-fit-modify · heavy 1x`)
	var root string
	var r result
	for attempt := 1; ; attempt++ {
		root = t.TempDir()
		r = headroom(t, "run", "--tasks", "bn-fit-modify,heavy-strategy", "--agents", "heavy,agent", "--ratios", "1,3,uncapped", "--repeats", "2", "--seed", "1", "--format", "json", "--out", root)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if n := len(killed.FindAllString(r.stderr, -1)); n == 2 || attempt == 2 {
			break
		}
		t.Logf("a heavy install fit its 1x limit (the kernel's own variance): the sweep runs again")
	}
	var doc report.JSONReport
	if err := report.ReadJSON([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not the JSON report: %v", err)
	}
	noContainersLeft(t, doc.Experiment)
	by := map[string]model.RegimeSplit{}
	for _, s := range doc.Regimes {
		by[s.From+"→"+s.To] = s
	}
	low, high := by["1x→3x"], by["3x→uncapped"]
	if low.Pairs != 4 || low.Rescued != 2 || low.Easier != 0 || low.RescuedCI.Hi <= low.RescuedCI.Lo {
		t.Errorf("1x→3x: %+v, want the two heavy installs rescued and nothing made easier\n%s", low, r.stderr)
	}
	if high.Pairs != 4 || high.Easier != 2 || high.Rescued != 0 {
		t.Errorf("3x→uncapped: %+v, want heavy-strategy's two made easier and nothing rescued\n%s", high, r.stderr)
	}
	md := headroom(t, "report", doc.Experiment, "--out", root, "--format", "markdown")
	if md.code != 0 || !strings.Contains(md.stdout, "| 1x → 3x | 4 | +50pp | 2 [") || !strings.Contains(md.stdout, "| 3x → uncapped | 4 | +50pp | 0 [0–49%] | 2 [") {
		t.Errorf("markdown report lacks the split:\n%s", md.stdout)
	}
	cmp := headroom(t, "compare", doc.Experiment, twinExperiment(t, filepath.Join(root, doc.Experiment)), "--out", root)
	if cmp.code != 0 || !strings.Contains(cmp.stdout, "rescued (infra → pass)") || !strings.Contains(cmp.stdout, "2/4 (2 killed)") {
		t.Errorf("compare lacks the failures at the limit or the split:\n%s%s", cmp.stdout, cmp.stderr)
	}
}
