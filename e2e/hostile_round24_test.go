//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round twenty-four, the thirtieth attacker's leftover: terminal-bench
// reads task.yaml with PyYAML (YAML 1.1), headroom with a YAML 1.2
// decoder. A key given twice (PyYAML keeps the last) and a base-60
// timeout (`1:30`, 90 s to PyYAML) were refused, tasks the harness runs;
// `0o74` (text to PyYAML, which the model refuses) ran with 60 s. Forged:
// each of the three validate decides otherwise than the harness.
func TestHostileR24TaskYAMLAsPyYAMLReadsIt(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	tasks := t.TempDir()
	for name, yaml := range map[string]string{
		"r24-dup":  "instruction: hi\nmax_agent_timeout_sec: 30\nmax_agent_timeout_sec: 120\n",
		"r24-sexa": "instruction: hi\nmax_agent_timeout_sec: 1:30\n",
		"r24-oct":  "instruction: hi\nmax_agent_timeout_sec: 0o74\n",
	} {
		dir := filepath.Join(tasks, name)
		if err := os.CopyFS(dir, os.DirFS("../examples/tasks/hello-old")); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, dir, map[string]string{"task.yaml": yaml})
	}
	val := runBin(t, bin, nil, "tasks", "validate", tasks)
	forged, agreed := 0, 0
	for _, want := range []string{
		"r24-dup/task.yaml:2: max_agent_timeout_sec is given again at line 3: the last is read",
		"r24-sexa/task.yaml:2: max_agent_timeout_sec: 1:30: a number in base 60 (YAML 1.1), read as 90",
		"error " + filepath.Join(tasks, "r24-oct") + "/task.yaml:2: max_agent_timeout_sec: 0o74 is the text \"0o74\" to terminal-bench's YAML reader",
	} {
		if !strings.Contains(val.stdout, want) {
			forged++
			t.Errorf("validate lacks %q\n%s%s", want, val.stdout, val.stderr)
			continue
		}
		agreed++
	}
	letoutRow(t, "task.yaml with `max_agent_timeout_sec` given twice, as `1:30` and as `0o74`: `tasks validate`",
		fmt.Sprintf("validate exit %d, %d of 3 read as PyYAML reads them (%s)", val.code, agreed, time.Since(start).Round(time.Second)), 0, 0, forged)
}
