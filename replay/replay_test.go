package replay

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload"
)

const hog = "head -c 250M /dev/zero | tail -n 1 > /dev/null && echo installed > /root/installed"

func TestLoadHarborJobReplaysTheTrajectoryAndRefusesTheRest(t *testing.T) {
	f, err := Load("testdata/harbor-job")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Recordings) != 1 {
		t.Fatalf("%d recordings, want 1: %+v", len(f.Recordings), f)
	}
	why := map[string]string{}
	for _, r := range f.Refused {
		why[filepath.Base(r.Dir)] = r.Why
	}
	if !strings.Contains(why["heavy-install__NoTraj"], "no agent/trajectory.json: openhands wrote no ATIF trajectory") {
		t.Errorf("no trajectory refused as %q", why["heavy-install__NoTraj"])
	}
	if !strings.Contains(why["heavy-install__Edits"], "not a shell (Edit ×1, Write ×1)") {
		t.Errorf("file edits refused as %q", why["heavy-install__Edits"])
	}
	rec := f.Recordings[0]
	if rec.Harness != "harbor" || rec.Trial != "heavy-install__Ab3dE" || rec.Task != "heavy-install" || rec.TaskPath != "tasks/heavy-install" || rec.Outcome != "passed" || rec.Agent != "terminus-2" || !rec.Terminal {
		t.Errorf("recording %+v", rec)
	}
	want := []struct {
		keys        string
		wait, think time.Duration
		output      string
	}{
		{"ls /root\n", 500 * time.Millisecond, 1500 * time.Millisecond, "root@4f2a9c0b1d4e:/# ls /root"},
		{hog + "\n", 3 * time.Second, time.Second, hog},
		{"cat /root/installed\n", 500 * time.Millisecond, 0, "installed"}, // mark_task_complete is not an action
	}
	if len(rec.Actions) != len(want) {
		t.Fatalf("%d actions, want %d: %+v", len(rec.Actions), len(want), rec.Actions)
	}
	for i, w := range want {
		a := rec.Actions[i]
		if !slices.Equal(a.Keys, []string{w.keys}) || a.Wait != w.wait || a.Think != w.think || !strings.Contains(a.Output, w.output) {
			t.Errorf("action %d: %+v, want keys %q wait %s think %s output with %q", i+1, a, w.keys, w.wait, w.think, w.output)
		}
	}
}

func TestLoadTerminalBenchRunReadsTheCastAndRefusesAnInstalledAgent(t *testing.T) {
	f, err := Load("testdata/tb-run")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Recordings) != 1 || len(f.Refused) != 1 {
		t.Fatalf("recordings %+v refused %+v, want one of each", f.Recordings, f.Refused)
	}
	if why := f.Refused[0].Why; !strings.Contains(why, "an installed agent") || !strings.Contains(why, "`mini -m anthropic/claude-sonnet-4-20250514") {
		t.Errorf("installed agent refused as %q", why)
	}
	rec := f.Recordings[0]
	if rec.Harness != "terminal-bench" || rec.Task != "heavy-install" || rec.Outcome != "passed" || rec.Agent != "terminus" || rec.TaskPath != filepath.Join("tasks", "heavy-install") {
		t.Errorf("recording %+v", rec)
	}
	want := []struct {
		keys     []string
		blocking bool
		think    time.Duration
		output   string
	}{
		// Typed without blocking: the next keys came 1 s later, whatever ran.
		{[]string{"ls /root\r"}, false, time.Second, "ls /root\nroot@24cfeeeb7847:/app# "},
		// Blocking: the command ended at its last output (4.2 s), the
		// model typed again at 5.0 s.
		{[]string{hog, "Enter"}, true, 800 * time.Millisecond, hog + "; tmux wait -S done\n"},
		{[]string{"cat /root/installed", "Enter"}, true, 0, "installed\n"},
	}
	if len(rec.Actions) != len(want) {
		t.Fatalf("%d actions, want %d: %+v", len(rec.Actions), len(want), rec.Actions)
	}
	for i, w := range want {
		a := rec.Actions[i]
		if !slices.Equal(a.Keys, w.keys) || a.Blocking != w.blocking || (a.Think-w.think).Abs() > time.Millisecond || !strings.Contains(a.Output, w.output) {
			t.Errorf("action %d: %+v, want keys %q blocking %v think %s output with %q", i+1, a, w.keys, w.blocking, w.think, w.output)
		}
	}
}

// Without a cast, commands.txt gives the keys: the harness's own lines
// (the recorder, its clear, the tests' part, C-d) are not the agent's.
func TestCommandsTxtAloneGivesTheKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "heavy-install", "heavy-install.1-of-1.run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/tb-run/heavy-install/heavy-install.1-of-2.run/commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "commands.txt"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(dir)
	if err != nil || len(f.Recordings) != 1 {
		t.Fatalf("recordings %+v refused %+v err %v", f.Recordings, f.Refused, err)
	}
	rec := f.Recordings[0]
	var got [][]string
	for _, a := range rec.Actions {
		got = append(got, a.Keys)
		if !a.Blocking {
			t.Errorf("%s does not wait for its prompt: keys typed ahead of a running command would charge its memory to a later action", a.Step)
		}
	}
	want := [][]string{{"ls /root", "Enter"}, {hog, "Enter"}, {"cat /root/installed", "Enter"}}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("keys %q, want %q", got, want)
	}
	if rec.Outcome != "" || !slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.Contains(n, "no think time") }) {
		t.Errorf("outcome %q notes %q: want no verdict and a note that there is no think time", rec.Outcome, rec.Notes)
	}
}

func TestLoadRefusesWhatIsNotARun(t *testing.T) {
	if _, err := Load("testdata/tasks"); err == nil || !strings.Contains(err.Error(), "holds no Harbor trial") {
		t.Errorf("a tasks directory: %v", err)
	}
	if _, err := Load("testdata/README.md"); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("a file: %v", err)
	}
}

func TestParsePyStrings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{`['pip install pandas', 'Enter']`, []string{"pip install pandas", "Enter"}, ""},
		{`["source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'", 'Enter']`, []string{"source /installed-agent/install-agent.sh && echo 'INSTALL_SUCCESS'", "Enter"}, ""},
		{`['echo \'hi\'\nls', 'C-c']`, []string{"echo 'hi'\nls", "C-c"}, ""},
		{`['tab\there', '\x1b']`, []string{"tab\there", "\x1b"}, ""},
		{`['C-d']`, []string{"C-d"}, ""},
		{`[]`, nil, ""},
		{`'ls'`, nil, "not a list"},
		{`['ls' 'Enter']`, nil, "want , between"},
		{`['ls`, nil, "not a list"},
		{`['ls]`, nil, "not closed"},
		{`[ls]`, nil, "want a quoted string"},
	} {
		got, err := parsePyStrings(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestParseThinkTime(t *testing.T) {
	for in, want := range map[string]ThinkTime{"recorded": 1, "0": 0, "×2": 2, "x0.5": 0.5, "3x": 3, "1.5": 1.5} {
		if got, err := ParseThinkTime(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"fast", "-1", "x", "1000", "nan", "xNaN", "inf"} {
		if _, err := ParseThinkTime(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestActionLabel(t *testing.T) {
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Keys: []string{"pip install pandas\n"}}, "pip install pandas"},
		{Action{Keys: []string{"pip install pandas", "Enter"}}, "pip install pandas"},
		{Action{Keys: []string{"C-c"}}, "C-c"},
		{Action{Keys: []string{""}, Wait: 30 * time.Second}, "wait 30s"},
		{Action{Keys: []string{"cat > f <<EOF\nline\nEOF\n"}}, "cat > f <<EOF …"},
		{Action{Command: "pytest -x tests/"}, "pytest -x tests/"},
		{Action{Command: strings.Repeat("a", 70)}, strings.Repeat("a", 59) + "…"},
	} {
		if got := c.a.Label(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.a, got, c.want)
		}
	}
}

// Each action is a step named after its command, typed into the
// terminal the first step opens, with the recorded wait and the think
// time as scaled.
func TestAgentIsOneStepPerAction(t *testing.T) {
	f, err := Load("testdata/tb-run")
	if err != nil {
		t.Fatal(err)
	}
	a := Agent(f.Recordings[0], Options{Binary: "/usr/local/bin/hr-workload", Think: 2})
	var names []string
	for _, s := range a.Steps {
		names = append(names, s.Name)
	}
	if want := []string{"open terminal", "ls /root", f.Recordings[0].Actions[1].Label(), "cat /root/installed"}; !slices.Equal(names, want) {
		t.Errorf("steps %q, want %q", names, want)
	}
	if up := a.Steps[0].Files; len(up) != 1 || up[0].From != "/usr/local/bin/hr-workload" || up[0].Name != "hr-workload" {
		t.Errorf("the first step copies in %+v, want the replayer", up)
	}
	hogStep := a.Steps[2].Argv
	want := []string{replayer, workload.TermMode, "keys", "--dir", termDir, "--wait", "0s", "--think", "1.6s", "--until-idle", "--", hog, "Enter"}
	if !slices.Equal(hogStep, want) {
		t.Errorf("the install's argv %q, want %q", hogStep, want)
	}
}

func TestShellToolCommandsRunAsTheirOwnProcesses(t *testing.T) {
	data := []byte(`{"schema_version": "ATIF-v1.2", "agent": {"name": "claude-code", "model_name": "m"}, "steps": [
	 {"step_id": 1, "timestamp": "2026-11-30T12:00:00Z", "source": "user", "message": "go"},
	 {"step_id": 2, "timestamp": "2026-11-30T12:00:02Z", "source": "agent", "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {"command": "pip install pandas"}}],
	  "observation": {"results": [{"source_call_id": "a", "content": "Successfully installed pandas"}]}},
	 {"step_id": 3, "timestamp": "2026-11-30T12:00:10Z", "source": "agent", "is_copied_context": true, "tool_calls": [{"tool_call_id": "b", "function_name": "Bash", "arguments": {"command": "ls"}}]},
	 {"step_id": 4, "timestamp": "2026-11-30T12:00:12Z", "source": "agent", "tool_calls": [{"tool_call_id": "c", "function_name": "TodoWrite", "arguments": {}}, {"tool_call_id": "d", "function_name": "execute_bash", "arguments": {"command": "python -c 'import pandas'"}}]}]}`)
	rec, err := parseATIF(data, "trajectory.json")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Terminal || len(rec.Actions) != 2 || rec.Actions[0].Command != "pip install pandas" || rec.Actions[0].Output != "Successfully installed pandas" || rec.Actions[0].Think != 10*time.Second {
		t.Fatalf("%+v", rec)
	}
	s := Agent(rec, Options{Binary: "/b", Think: 0}).Steps
	if len(s) != 2 || !slices.Equal(s[0].Argv, []string{replayer, workload.TermMode, "exec", "--think", "0s", "--", "bash", "-c", "pip install pandas"}) {
		t.Errorf("steps %+v", s)
	}
}

func TestATIFThatCannotReplay(t *testing.T) {
	for _, c := range []struct{ name, doc, err string }{
		{"not json", `{`, "not an ATIF trajectory"},
		{"other schema", `{"schema_version": "1.0", "steps": []}`, `schema_version "1.0" is not ATIF`},
		{"no actions", `{"schema_version": "ATIF-v1.5", "steps": [{"step_id": 1, "source": "user", "message": "x"}]}`, "no shell actions"},
		{"both", `{"schema_version": "ATIF-v1.5", "steps": [{"step_id": 1, "source": "agent", "tool_calls": [{"function_name": "bash_command", "arguments": {"keystrokes": "ls\n"}}, {"function_name": "Bash", "arguments": {"command": "ls"}}]}]}`, "both typed keys and ran shell commands"},
		{"empty command", `{"schema_version": "ATIF-v1.5", "steps": [{"step_id": 3, "source": "agent", "tool_calls": [{"function_name": "Bash", "arguments": {}}]}]}`, `step 3: Bash call 1 has no "command"`},
		// 1e308 s overflowed to a negative wait (the twenty-ninth attacker's 4).
		{"a wait past any agent's time", `{"schema_version": "ATIF-v1.5", "steps": [{"step_id": 2, "source": "agent", "tool_calls": [{"function_name": "bash_command", "arguments": {"keystrokes": "ls\n", "duration": 1e308}}]}]}`, "step 2: bash_command call 1 waits 1e+308 s, past any agent's time"},
	} {
		if _, err := parseATIF([]byte(c.doc), "t.json"); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}

func TestCastErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ doc, err string }{
		{`{"version": 1}`, "agent.cast:1: not an asciinema v2 header"},
		{"{\"version\": 2}\n[1.0, \"o\"]\n", "agent.cast:2: not an event"},
		{"{\"version\": 2}\n[-1, \"o\", \"x\"]\n", "agent.cast:2: not an event"},
		{"{\"version\": 2}\n[1e308, \"o\", \"x\"]\n", "agent.cast:2: not an event"},
	} {
		if _, err := parseCast([]byte(c.doc), "agent.cast"); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.err)
		}
	}
}

// The record names the first action that parted from the recording: a
// kill before a mere difference of output, and the actions that did
// not run when nothing else parted.
func TestDiverge(t *testing.T) {
	f, err := Load("testdata/harbor-job")
	if err != nil {
		t.Fatal(err)
	}
	rec := f.Recordings[0]
	step := func(name, out string) model.StepResult {
		return model.StepResult{Name: name, Phase: model.PhaseAgent, Output: out}
	}
	open := step("open terminal", "terminal: /bin/bash --login (pid 23) in a 160x40 pty")
	ls := step("ls /root", "root@f314a634aa72:/# ls /root\nroot@f314a634aa72:/# ")
	install := step(rec.Actions[1].Label(), hog+"\nKilled\nroot@f314a634aa72:/# ")
	install.OOMKills, install.PeakWorkingSetBytes = 1, 96*model.MiB
	cat := step("cat /root/installed", "cat /root/installed\ncat: /root/installed: No such file or directory\n")
	verifier := model.StepResult{Name: "test.sh", Phase: model.PhaseVerifier, ExitCode: 1}

	killed := model.TrialResult{Steps: []model.StepResult{open, ls, install, cat, verifier}, OOMs: []model.OOMEvent{{Step: install.Name, Process: "tail"}}}
	r := Diverge(rec, killed)
	if r.Ran != 3 || r.Divergence == nil || r.Divergence.Action != 2 || r.Divergence.Kind != model.DivergedOOM || r.Divergence.Detail != "OOM-killed (tail killed, peak 96MiB)" {
		t.Fatalf("%+v %+v", r, r.Divergence)
	}
	if got := r.Sentence("1x"); got != "diverged at action 2/3 `"+rec.Actions[1].Label()+"`: OOM-killed (tail killed, peak 96MiB) at 1x; the recording continued" {
		t.Errorf("sentence %q", got)
	}
	if r.Similarity[2] >= OutputAlike {
		t.Errorf("a missing file against `installed`: similarity %v, want below %v", r.Similarity[2], OutputAlike)
	}

	last := Diverge(rec, model.TrialResult{Steps: []model.StepResult{open, ls, step(install.Name, hog+"\n"), cat}})
	if got := last.Sentence("2x"); !strings.HasSuffix(got, "at 2x; the recording's last action") {
		t.Errorf("a divergence at the last action: %q", got)
	}

	outputOnly := model.TrialResult{Steps: []model.StepResult{open, ls, step(install.Name, hog+"\n"), cat}}
	if d := Diverge(rec, outputOnly).Divergence; d == nil || d.Action != 3 || d.Kind != model.DivergedOutput || !strings.Contains(d.Detail, "`cat: /root/installed: No such file or directory` here, `installed` recorded") {
		t.Errorf("output only: %+v", d)
	}

	followed := model.TrialResult{Steps: []model.StepResult{open, ls, step(install.Name, hog+"\n"), step("cat", "cat /root/installed\ninstalled\n")}}
	if r := Diverge(rec, followed); r.Divergence != nil || r.Ran != 3 || r.Sentence("uncapped") != "followed the recording: 3/3 actions ran, none diverged" {
		t.Errorf("followed: %+v %+v", r, r.Divergence)
	}

	timedOut := ls
	timedOut.TimedOut = true
	short := model.TrialResult{Outcome: model.Timeout, Steps: []model.StepResult{open, timedOut}}
	if d := Diverge(rec, short).Divergence; d == nil || d.Action != 1 || d.Kind != model.DivergedTimeout {
		t.Errorf("timed out: %+v", d)
	}
	cut := model.TrialResult{Outcome: model.InfraError, Steps: []model.StepResult{open, ls}}
	if d := Diverge(rec, cut).Divergence; d == nil || d.Action != 2 || d.Kind != model.DivergedNotRun || d.Detail != "did not run: the trial ended before it (infra-error)" {
		t.Errorf("cut short: %+v", d)
	}
	gone := step(install.Name, workload.TermNote+" the terminal's shell has ended (signal: killed)\n")
	gone.ExitCode = workload.TermShellExited
	if d := Diverge(rec, model.TrialResult{Steps: []model.StepResult{open, ls, gone}}).Divergence; d == nil || d.Kind != model.DivergedTerminal || d.Detail != "the terminal's shell has ended (signal: killed)" {
		t.Errorf("shell gone: %+v", d)
	}
	noTerminal := open
	noTerminal.ExitCode, noTerminal.Output = 1, "hr-workload term: the terminal did not start: open /dev/ptmx: no such file"
	if d := Diverge(rec, model.TrialResult{Steps: []model.StepResult{noTerminal}}).Divergence; d == nil || d.Action != 1 || d.Kind != model.DivergedTerminal || !strings.Contains(d.Detail, "/dev/ptmx") {
		t.Errorf("no terminal: %+v", d)
	}
}

func TestSimilarity(t *testing.T) {
	for _, c := range []struct {
		a, b   string
		lo, hi float64
	}{
		{"", "", 1, 1},
		{"Collecting pandas\nDownloading pandas-2.2.3.whl (12.1 MB)", "Collecting pandas\nDownloading pandas-2.2.1.whl (11.9 MB)", 1, 1},
		{"New Terminal Output:\n\nroot@4f2a9c0b1d4e:/# ls\nfile", "root@e7ab8fa4b326:/# ls\nfile", 1, 1},
		{"installed", "cat: /root/installed: No such file or directory", 0, OutputAlike},
		{"ok", "", 0, 0},
	} {
		if got := Similarity(c.a, c.b); got < c.lo || got > c.hi {
			t.Errorf("Similarity(%q, %q) = %v, want in [%v, %v]", c.a, c.b, got, c.lo, c.hi)
		}
	}
}

// A task that runs its tests in the agent's own pane: the harness typed
// them, not the agent, in the cast and in commands.txt alike.
func TestTestsRunInTheAgentsPaneAreNotTheAgents(t *testing.T) {
	events, err := parseCast([]byte(`{"version": 2, "width": 160, "height": 40}
[0.27, "i", "clear\r"]
[1.5, "i", "ls\r"]
[529.3, "i", "bash /tests/run-tests.sh; tmux wait -S done\r"]
[532.9, "i", "\u0004"]
`), "agent.cast")
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := castActions(events, "agent.cast"); len(a) != 1 || a[0].Keys[0] != "ls\r" {
		t.Errorf("cast actions %+v, want ls alone", a)
	}
	a, err := commandsActions([]byte("['asciinema rec --stdin /logs/agent.cast', 'Enter']\n['clear', 'Enter']\n['ls', 'Enter']\n['bash ', '/tests/run-tests.sh', 'Enter']\n['C-d']\n"), "commands.txt")
	if err != nil || len(a) != 1 || a[0].Keys[0] != "ls" {
		t.Errorf("commands.txt actions %+v %v, want ls alone", a, err)
	}
}

// A think time that --think-time scales past the agent's time limit is
// said, in the note the record and the report carry: every replay times
// out, and the report blamed the actions' non-determinism (the
// twenty-ninth attacker's 4).
func TestThinkTimePastTheLimitIsSaid(t *testing.T) {
	rec := Recording{Actions: []Action{{Command: "a", Think: 1500 * time.Millisecond}, {Command: "b"}}}
	task := model.Task{AgentTimeout: 2 * time.Minute}
	if got := CapThink(rec, task, 1); got.ThinkCapped != "" {
		t.Errorf("as recorded: %q", got.ThinkCapped)
	}
	got := CapThink(rec, task, 100)
	if want := "its think time with --think-time ×100 is 2m30s in all, longer than the agent's time limit (2m0s): every replay times out"; got.ThinkCapped != want || !slices.Contains(got.Notes, want) {
		t.Errorf("×100: %q, notes %q; want %q", got.ThinkCapped, got.Notes, want)
	}
}
