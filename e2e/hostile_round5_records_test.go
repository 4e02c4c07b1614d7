//go:build hostile

package e2e

// The hostile-input suite's fifth round (the hint-free attacker after
// round four): a step's output and a loop of kills grew a trial's record
// past what a reader takes, and with it every record of the experiment.
// Each row drives the binary under test (hostileBin: this tree's, or
// HEADROOM_HOSTILE_BIN's to show it failing on a build without the fix).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner/docker"
)

// recordTask writes a headroom task (the Debian image, memory mem, no
// network) whose one agent step runs script.
func recordTask(t *testing.T, dir, name, mem, script string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	body := fmt.Sprintf("[task]\nname = %q\n[environment]\nimage = %q\nmemory = %q\nnetwork = \"none\"\n[agent]\ntimeout_sec = 120\n[verifier]\ncommand = [\"true\"]\n[[agents]]\nname = \"agent\"\n  [[agents.steps]]\n  name = \"flood\"\n  command = [\"bash\", \"-c\", %q]\n", name, docker.DebianImage, mem, script)
	if err := os.WriteFile(filepath.Join(dir, "task.toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Round 5, item 1: any step's output may print measure lines
// (`headroom-measure: NAME VALUE UNIT`), each kept in the record; 10 s of
// `yes` made a 290 MB record line, 4 GB of headroom's memory, and an
// experiment `report` and `run --resume` refused ("a line longer than
// 64 MiB"). Lost: the trial's record unreadable; leaked: headroom's
// memory past 1 GiB; forged: measures past the cap kept.
func TestHostileR5MeasureFlood(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	recordTask(t, filepath.Join(tasks, "flood"), "hostile-r5/measure-flood", "128M", "timeout 4 yes 'headroom-measure: m 1 s'; true")
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--ratios", "1x", "--repeats", "1", "--out", out)
	dir, left := onlyExperiment(t, out)
	rep := runBin(t, bin, nil, "report", dir)
	lost, leaked, forged := 0, 0, 0
	if rep.code != 0 {
		lost++
	}
	if run.maxRSSKiB > 1<<20 {
		leaked++
	}
	data, _ := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	kept, dropped := -1, -1
	if line, _, _ := strings.Cut(string(data), "\n"); line != "" {
		var r struct {
			Knobs *struct {
				Measured []struct {
					Name string `json:"name"`
				} `json:"measured"`
				Dropped int `json:"measures_dropped"`
			} `json:"knobs"`
		}
		if err := json.Unmarshal([]byte(line), &r); err == nil && r.Knobs != nil {
			kept, dropped = 0, r.Knobs.Dropped
			for _, m := range r.Knobs.Measured {
				if m.Name == "m" { // the task's, not headroom's own agent_time
					kept++
				}
			}
		}
	}
	if kept > 256 {
		forged++
	}
	t.Logf("| 4 s of `yes 'headroom-measure: m 1 s'` in a step | exit %d; the record %d bytes, %d measures kept, %d counted; headroom's peak RSS %d MiB; `report` exit %d %s | %d | %d | %d |",
		run.code, len(data), kept, dropped, run.maxRSSKiB>>10, rep.code, strings.SplitN(strings.TrimSpace(rep.stderr), "\n", 2)[0], lost, leaked+left, forged)
	if lost+leaked+left+forged > 0 || kept < 0 || dropped <= 0 {
		t.Errorf("lost %d, leaked %d, left %d, forged %d; measures kept %d, counted past the cap %d\n%s", lost, leaked, left, forged, kept, dropped, run.stderr)
	}
}

// Round 5, item 2: a loop of OOM kills (a child allocating past the limit
// again and again; four at once here) kept every kill in the record, each with the
// container's processes: 2,625 kills in 300 s, a 45.6 MB record line,
// on the way past what a reader takes. Forged: kills kept past the cap;
// lost: kills neither kept nor counted.
func TestHostileR5OOMLoop(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := filepath.Join(t.TempDir(), "tasks")
	recordTask(t, filepath.Join(tasks, "oomloop"), "hostile-r5/oom-loop", "96M",
		"end=$((SECONDS+20)); for j in 1 2 3 4; do (while [ $SECONDS -lt $end ]; do python3 -c \"b=b'x'*(200<<20)\" 2>/dev/null; done) & done; wait; true")
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--ratios", "1x", "--repeats", "1", "--out", out)
	_, recs, left := records(t, out)
	lost, forged := 0, 0
	kept, dropped, counted := 0, 0, 0
	if len(recs) != 1 {
		lost++
	} else {
		ooms, _ := recs[0]["ooms"].([]any)
		kept = len(ooms)
		if d, ok := recs[0]["oom_events_dropped"].(float64); ok {
			dropped = int(d)
		}
		for _, s := range steps(recs[0]) {
			if k, ok := s["oom_kills"].(float64); ok {
				counted += int(k)
			}
		}
	}
	if kept > 100 {
		forged++
	}
	if counted > 100 && dropped == 0 {
		lost++ // kills past the cap neither kept nor counted
	}
	t.Logf("| 20 s of `python3` allocating 200 MiB under a 96M limit, in four loops at once | exit %d; %d kills counted in the step, %d kept in the record, %d counted past the cap | %d | %d | %d |", run.code, counted, kept, dropped, lost, left, forged)
	if lost+left+forged > 0 || counted <= 100 {
		t.Errorf("lost %d, left %d, forged %d; kills counted %d (want over 100 to test the cap), kept %d, dropped %d\n%s", lost, left, forged, counted, kept, dropped, run.stderr)
	}
}
