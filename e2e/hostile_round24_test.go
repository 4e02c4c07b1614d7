//go:build hostile

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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

// The thirtieth attacker's leftover: names from a recorded run are not a
// task file's, so not refused at load. A Harbor job whose trials name
// task "x" with agent "a · b" and task "x · a" with agent "b" printed
// two report rows "x · a · b", one passed, one OOM-killed. The tables
// now escape the dot inside a name (\u00b7). Forged: each report format
// printing two rows with one label.
func TestHostileR24ImportedNamesWithTheRowSeparator(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	job, results := harborJobCopy(t)
	for i, names := range [][2]string{{"x", "a · b"}, {"x · a", "b"}} {
		editResult(t, results[i], func(r map[string]any) {
			r["task_name"] = names[0]
			info := r["agent_info"].(map[string]any)
			info["name"] = names[1]
			delete(info, "model_info")
			r["config"].(map[string]any)["agent"].(map[string]any)["model_name"] = nil
		})
	}
	out := filepath.Join(t.TempDir(), "out")
	imp := runBin(t, bin, nil, "import", "harbor", job, "--out", out)
	if imp.code != 0 {
		t.Fatalf("import: exit %d\n%s%s", imp.code, imp.stdout, imp.stderr)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Fatalf("%d experiments imported", len(ents))
	}
	forged := 0
	var said []string
	for _, format := range []string{"table", "markdown"} {
		rep := runBin(t, bin, nil, "report", "--out", out, ents[0].Name(), "--format", format)
		labels := map[string]int{}
		for _, line := range strings.Split(rep.stdout, "\n") {
			l := strings.TrimSpace(strings.TrimPrefix(line, "|"))
			if strings.HasPrefix(l, "x ") {
				labels[strings.TrimSpace(strings.SplitN(strings.SplitN(l, "|", 2)[0], "  ", 2)[0])]++
			}
		}
		for label, n := range labels {
			if n > 1 {
				forged++
				t.Errorf("%s report: %d rows read %q\n%s", format, n, label, rep.stdout)
			}
		}
		said = append(said, fmt.Sprintf("%s: %d labels", format, len(labels)))
	}
	letoutRow(t, "Harbor job whose trials name task `x` with agent `a · b` and task `x · a` with agent `b`: `import harbor`, `report`",
		fmt.Sprintf("%s (%s)", strings.Join(said, ", "), time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The thirty-second attacker's 1 (medium-high): a terminal-bench
// recording of 150 quick blocking commands (`true; tmux wait -S done`,
// 50 ms apart, 9 s in all). The replay's terminal counted a blocking
// command's prompt once it had seen the command run, or after a second:
// `true` ends before the first look, so each took a second, the replay
// ran past the task's 2-minute limit at action 113 and the record said
// the agent's timeout, the report the recording's non-determinism. Now
// the shell having read every key and waiting for more is the prompt.
// Forged: the replay not passed.
func TestHostileR24ReplayOfQuickBlockingCommands(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	dir, trial := replayTestdataCopy(t)
	if err := os.RemoveAll(filepath.Join(dir, "tb-run", "heavy-install", "heavy-install.2-of-2.run")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(trial, "commands.txt")); err != nil {
		t.Fatal(err)
	}
	event := func(at float64, kind, text string) string {
		b, _ := json.Marshal([]any{at, kind, text})
		return string(b) + "\n"
	}
	cast := `{"version": 2, "width": 160, "height": 40, "timestamp": 1754638035, "env": {"SHELL": "/bin/bash", "TERM": "tmux-256color"}}` + "\n" + event(0.01, "o", "root@x:/app# ")
	at := 0.5
	for range 150 {
		cast += event(at, "i", "true; tmux wait -S done\r") + event(at+0.01, "o", "root@x:/app# ")
		at += 0.05
	}
	cast += event(at, "i", "echo installed > /root/installed; tmux wait -S done\r") + event(at+0.05, "o", "root@x:/app# ") + event(at+0.5, "i", "\u0004")
	writeFiles(t, filepath.Join(trial, "sessions"), map[string]string{"agent.cast": cast})
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "replay", trial, "--tasks-dir", filepath.Join(dir, "tasks"), "--ratios", "uncapped", "--out", out)
	said, leaked := onlyOutcome(t, out)
	forged := 0
	if said != "passed · <nil>" {
		forged++
		t.Errorf("record: %q; want passed, as the recording's 9 s of commands pass\n%s%s", said, run.stdout, run.stderr)
	}
	letoutRow(t, "replay of a terminal-bench recording of 150 quick blocking commands (`true; tmux wait -S done`, 9 s in all) under a 2-minute limit",
		fmt.Sprintf("exit %d, %s (%s)", run.code, said, time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// The thirty-second attacker's 3 (low): replay read a recording's files
// through links leading anywhere, where import reads none leading out of
// the run: a commands.txt linked to a host file of `['echo HOSTSECRET',
// 'Enter']` was listed as "1 replay" and would have been typed into the
// task's container. Forged: the trial not refused.
func TestHostileR24ReplayLinkOutOfTheRecording(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	_, trial := replayTestdataCopy(t)
	host := filepath.Join(t.TempDir(), "commands.txt")
	writeFiles(t, filepath.Dir(host), map[string]string{"commands.txt": "['echo HOSTSECRET', 'Enter']\n"})
	if err := os.Remove(filepath.Join(trial, "sessions", "agent.cast")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(trial, "commands.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(trial, "commands.txt")); err != nil {
		t.Fatal(err)
	}
	list := runBin(t, bin, nil, "replay", trial, "--list")
	forged := 0
	if !strings.Contains(list.stdout+list.stderr, "commands.txt leads outside") {
		forged++
		t.Errorf("--list: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	letoutRow(t, "`replay --list` of a terminal-bench trial whose commands.txt is a link to a host file",
		fmt.Sprintf("exit %d, %s (%s)", list.code, map[bool]string{true: "the trial refused: the file leads outside the run", false: "listed"}[forged == 0], time.Since(start).Round(time.Second)), 0, 0, forged)
}

// The thirty-second attacker's 2 (medium): import's memory grew with
// what small files held. A Harbor job whose trial result.json holds
// verifier_result.rewards of 2,000,000 small keys (inside the 64 MiB file
// bound), hard-linked into a second trial directory: each was parsed and
// held (6.1M keys in 8 links took 4.2 GB). Now a rewards map past
// 100,000 keys is refused as it is decoded, and one file in two trial
// directories is refused before it is parsed again. Forged: an import
// that was not refused.
func TestHostileR24ImportOfAHugeRewardsMapLinkedTwice(t *testing.T) {
	bin := hostileBin(t)
	start := time.Now()
	job, results := harborJobCopy(t)
	editResult(t, results[0], func(r map[string]any) { r["verifier_result"] = map[string]any{"rewards": "REWARDS"} })
	data, err := os.ReadFile(results[0])
	if err != nil {
		t.Fatal(err)
	}
	var keys strings.Builder
	keys.WriteString(`{"reward":1`)
	for i := range 2_000_000 {
		fmt.Fprintf(&keys, `,"k%d":0`, i)
	}
	keys.WriteString(`}`)
	writeFiles(t, filepath.Dir(results[0]), map[string]string{"result.json": strings.Replace(string(data), `"REWARDS"`, keys.String(), 1)})
	if err := os.Remove(results[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(results[0], results[1]); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	imp := runBin(t, bin, nil, "import", "harbor", job, "--out", out)
	forged := 0
	if imp.code == 0 || !strings.Contains(imp.stderr, "more than 100000 keys") || !strings.Contains(imp.stderr, "is the same file as") {
		forged++
		t.Errorf("import: exit %d\n%s%s", imp.code, imp.stdout, imp.stderr)
	}
	letoutRow(t, "`import harbor` of a job whose result.json holds 2,000,000 reward keys (about 24 MB), hard-linked into a second trial",
		fmt.Sprintf("exit %d, %s, peak %d MiB (%s)", imp.code, map[bool]string{true: "refused: the rewards past 100,000 keys, the second trial the same file", false: "the rewards and the link read whole"}[forged == 0], imp.maxRSSKiB>>10, time.Since(start).Round(time.Second)), 0, 0, forged)
}

// harborJobCopy is a copy of a Harbor job of 18 trials (the importer's
// testdata) and its trials' result.json, sorted.
func harborJobCopy(t *testing.T) (string, []string) {
	t.Helper()
	job := filepath.Join(t.TempDir(), "job")
	if err := os.CopyFS(job, os.DirFS("../importer/testdata/harbor/tb2-docker-1x")); err != nil {
		t.Fatal(err)
	}
	results, _ := filepath.Glob(filepath.Join(job, "*", "result.json"))
	sort.Strings(results)
	return job, results
}

// editResult rewrites a trial's result.json through edit.
func editResult(t *testing.T, file string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	edit(r)
	if data, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Dir(file), map[string]string{"result.json": string(data)})
}

// replayTestdataCopy is a copy of replay's testdata and its first
// terminal-bench trial there.
func replayTestdataCopy(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "testdata")
	if err := os.CopyFS(dir, os.DirFS("../replay/testdata")); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "tb-run", "heavy-install", "heavy-install.1-of-2.run")
}

// The thirty-third attacker's 1 (high): a traced script reads its trace
// marks' prefix from PS4 (bash expands it from a variable the script
// sees) and writes 200,000 marks of distinct pids to the trace, each
// joining one pipeline. Each mark's work grew with those before it:
// headroom read the trace ever more slowly, the writes blocked, and the
// agent's time limit ended the trial (600,000 marks: 280 s of
// headroom's CPU), recorded as the agent's timeout. Now the book keeps
// a bounded part of any pipeline and a mark past it costs nothing more.
// Forged: the trial not passed (its own work takes a few seconds).
func TestHostileR24ForgedTraceMarksCostNothing(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	tasks := filepath.Join(t.TempDir(), "tasks")
	name := "hostile-r24/forged-marks"
	harborTask(t, tasks, "forged-marks", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n[environment]\ncpus = 1\nmemory_mb = 256\nallow_internet = false\n", name),
		"solution/solve.sh": "#!/bin/bash\nexport M=\"${PS4%%\\$*}\" R=$$\npython3 - <<'PY' >&237\nimport os, sys\nm, r = os.environ['M'], os.environ['R']\nw = sys.stdout.write\nfor i in range(1, 200001):\n    w('%s0|0|%d|%s||0] :\\n' % (m, 100000 + i, r))\nPY\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r24/forged-marks") })
	out := filepath.Join(t.TempDir(), "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--ratios", "uncapped", "--repeats", "1", "--out", out)
	said, leaked := onlyOutcome(t, out)
	forged := 0
	if said != "passed · <nil>" {
		forged++
		t.Errorf("record: %q; want passed: the script's own work takes seconds\n%s", said, run.stderr)
	}
	letoutRow(t, "a traced solve.sh writing 200,000 trace marks of its own (the prefix read from $PS4), each a new pid joining one pipeline, under a 60 s agent limit",
		fmt.Sprintf("exit %d, %s, headroom's CPU %s (%s)", run.code, said, run.cpu.Round(100*time.Millisecond), time.Since(start).Round(time.Second)), 0, leaked, forged)
}

// onlyOutcome is the one record's "outcome · cause" under out ("" unless
// there is exactly one), and the containers left.
func onlyOutcome(t *testing.T, out string) (string, int) {
	t.Helper()
	_, recs, leaked := records(t, out)
	if len(recs) != 1 {
		return "", leaked
	}
	return fmt.Sprintf("%v · %v", recs[0]["outcome"], recs[0]["cause"]), leaked
}
