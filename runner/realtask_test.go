package runner_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// A traced script becomes one step per command it ran, each with its own
// peak and kills; the trace's own lines are not output.
func TestTracedStepSplitsIntoCommands(t *testing.T) {
	task := fake.Task("tb/traced", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve", Argv: []string{"/solution/solve.sh"}, Trace: true}}
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name != "/solution/solve.sh" {
			return fake.StepPlan{}
		}
		return fake.StepPlan{ExitCode: 0, Lines: []string{
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "cd /app"),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "pip install pandas"),
			"Collecting pandas",
			// A failing command on the way: its own status is kept.
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "grep -q done log"),
			"!" + fake.TraceLine(1, "1|1|10|10|0|0", "python fit.py"),
			"fitted",
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", ": headroom-trace-end"),
		}}
	}}
	// The fake prefixes stderr lines with "!": strip that for the marker.
	b.Script = stripBang(b.Script)
	res := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	r := res.results["tb/traced@1x"]
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Phase+":"+s.Name)
	}
	want := "agent:cd /app,agent:pip install pandas,agent:grep -q done log,agent:python fit.py,verifier:verify"
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("steps = %s\nwant %s", got, want)
	}
	if out := r.Steps[1].Output; out != "Collecting pandas" {
		t.Errorf("pip step output = %q", out)
	}
	var codes []int
	for _, s := range r.Steps {
		codes = append(codes, s.ExitCode)
		if strings.Contains(s.Output, runner.TraceMarker) || strings.Contains(s.Output, "headroom-trace-end") {
			t.Errorf("trace lines leaked into %s output: %q", s.Name, s.Output)
		}
	}
	if fmt.Sprint(codes) != "[0 0 1 0 0]" {
		t.Errorf("exit codes %v, want [0 0 1 0 0] (grep failed on the way)", codes)
	}
	if r.Outcome != model.Passed {
		t.Errorf("outcome %s (%s): the script exited 0", r.Outcome, r.Reason)
	}
}

// stripBang turns the fake's "!" stderr marker into a real stderr line
// whose text starts right after it.
func stripBang(s fake.Script) fake.Script {
	return func(tr model.Trial, st model.Step) fake.StepPlan {
		p := s(tr, st)
		p.StripStderrMark = true
		return p
	}
}

func TestRewardFileDecidesTheVerifier(t *testing.T) {
	rule := &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	cases := []struct {
		name    string
		writes  map[string]string
		exit    int
		outcome model.Outcome
		reason  string
		reward  float64
	}{
		{"txt pass despite exit 1", map[string]string{"/logs/verifier/reward.txt": "1.0\n"}, 1, model.Passed, "", 1},
		{"txt partial", map[string]string{"/logs/verifier/reward.txt": "0.5"}, 0, model.Failed, "reward 0.5 < 1", 0.5},
		{"json reward key", map[string]string{"/logs/verifier/reward.json": `{"reward": 1, "style": 0}`}, 0, model.Passed, "", 1},
		{"json min", map[string]string{"/logs/verifier/reward.json": `{"a": 1, "b": 0.25}`}, 0, model.Failed, "reward 0.25 < 1", 0.25},
		{"txt wins over json", map[string]string{"/logs/verifier/reward.txt": "0", "/logs/verifier/reward.json": `{"reward": 1}`}, 0, model.Failed, "reward 0 < 1", 0},
		{"missing", nil, 0, model.Failed, "the verifier wrote no reward", -1},
		{"garbage", map[string]string{"/logs/verifier/reward.txt": "PASSED"}, 0, model.Failed, `reward.txt: is not a number: "PASSED"`, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := fake.Task("tb/reward", 64<<20, "solve")
			task.Verdict.Reward = rule
			b := &fake.Backend{Script: script(map[string]fake.StepPlan{"tb/reward/verify": {Writes: c.writes, ExitCode: c.exit}})}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb/reward@1x"]
			if r.Outcome != c.outcome || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("outcome %s (%s), want %s (%q)", r.Outcome, r.Reason, c.outcome, c.reason)
			}
			switch {
			case c.reward < 0 && r.Reward != nil:
				t.Errorf("reward recorded as %v, want none", *r.Reward)
			case c.reward >= 0 && (r.Reward == nil || *r.Reward != c.reward):
				t.Errorf("reward = %v, want %v", r.Reward, c.reward)
			}
		})
	}
}

// The verdict is the verifier's: a reward file the agent wrote before it
// ran is removed first, so a verifier that writes none has no reward
// (the agent's "1" used to pass a trial whose tests crashed).
// A sandbox that removes files itself (the step driver) does so without
// an exec'd rm: a process less per trial.
func TestARewardTheAgentPlantedIsNotTheVerdict(t *testing.T) {
	for _, removes := range []bool{false, true} {
		t.Run(fmt.Sprintf("removes=%v", removes), func(t *testing.T) {
			task := fake.Task("tb/planted", 64<<20, "solve")
			task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
			plans := script(map[string]fake.StepPlan{
				"tb/planted/solve":  {Writes: map[string]string{"/logs/verifier/reward.txt": "1\n", "/logs/verifier/reward.json": `{"reward": 1}`}},
				"tb/planted/verify": {ExitCode: 1, Lines: []string{"the tests crashed before writing a reward"}},
			})
			var mu sync.Mutex
			rms := 0
			b := &fake.Backend{RemovesFiles: removes, Script: func(tr model.Trial, st model.Step) fake.StepPlan {
				if len(st.Argv) > 0 && st.Argv[0] == "rm" {
					mu.Lock()
					rms++
					mu.Unlock()
				}
				return plans(tr, st)
			}}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb/planted@1x"]
			if r.Outcome != model.Failed || !strings.Contains(r.Reason, "the verifier wrote no reward") || r.Reward != nil {
				t.Fatalf("outcome %s (%s), reward %v; want failed, no reward", r.Outcome, r.Reason, r.Reward)
			}
			if want := map[bool]int{false: 1, true: 0}[removes]; rms != want {
				t.Errorf("%d rm execs, want %d", rms, want)
			}
		})
	}
}

// A verifier killed by the kernel is an OOM kill, whatever reward it left.
func TestVerifierOOMWithRewardIsOOMKilled(t *testing.T) {
	task := fake.Task("tb/vkill", 64<<20, "solve")
	task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
	b := &fake.Backend{Script: script(map[string]fake.StepPlan{"tb/vkill/verify": {OOM: true, ExitCode: 137}})}
	r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb/vkill@1x"]
	if r.Outcome != model.OOMKilled || r.KilledInStep != "verify" {
		t.Fatalf("outcome %s in %q (%s), want oom-killed in verify", r.Outcome, r.KilledInStep, r.Reason)
	}
}

// Secrets reach the step's environment and nothing else: output lines,
// step records and reasons carry [redacted NAME].
func TestSecretsAreRedacted(t *testing.T) {
	const key = "sk-live-0123456789"
	task := fake.Task("tb/secret", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "agent", Argv: []string{"agent"}, PassEnv: []string{"API_KEY"}}}
	var gotEnv []string
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "agent" {
			gotEnv = st.Env
			return fake.StepPlan{Lines: []string{"using key " + key, "!error: bad key " + key + "!"}, ExitCode: 3}
		}
		return fake.StepPlan{}
	}}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"API_KEY": key}
	res := runSweep(t, b, cfg, context.Background(), nil)
	if !containsString(gotEnv, "API_KEY="+key) {
		t.Fatalf("step env %v lacks the secret", gotEnv)
	}
	for _, e := range res.events {
		if ol, ok := e.(event.OutputLine); ok && strings.Contains(ol.Text, key) {
			t.Fatalf("secret in an output event: %q", ol.Text)
		}
	}
	r := res.results["tb/secret@1x"]
	if out := r.Steps[0].Output; strings.Contains(out, key) || !strings.Contains(out, "using key [redacted API_KEY]") {
		t.Fatalf("step output not redacted: %q", out)
	}
	// Short values cannot be redacted safely and are refused.
	cfg.Secrets = map[string]string{"API_KEY": "abc"}
	if _, err := runner.New(b, cfg); err == nil || !strings.Contains(err.Error(), "API_KEY") {
		t.Fatalf("a 3-character secret was accepted: %v", err)
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestFilesAreCopiedBeforeTheirStep(t *testing.T) {
	task := fake.Task("tb/files", 64<<20, "solve")
	task.Agents[0].Steps[0].Files = []model.Upload{{From: "/t/solution", To: "/solution"}}
	task.Verifier.Files = []model.Upload{{From: "/t/tests", To: "/tests"}}
	var order []string
	b := &fake.Backend{}
	b.Script = func(tr model.Trial, st model.Step) fake.StepPlan {
		order = append(order, st.Name+" after "+strings.Join(b.Uploaded(), "; "))
		return fake.StepPlan{}
	}
	runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	want := []string{"solve after t0001: /solution <- /t/solution", "verify after t0001: /solution <- /t/solution; t0001: /tests <- /t/tests"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Fatalf("order = %q\nwant %q", order, want)
	}
}

// A task's "${HOST}" env entries reach its steps under their own names,
// from the host variable, and are redacted like any secret.
func TestTaskPassEnvMapsHostNames(t *testing.T) {
	const judge = "judge-key-0123456789"
	task := fake.Task("tb/judged", 64<<20, "solve")
	task.PassEnv = []string{"TASK_WIDE=HOST_WIDE"}
	task.Verifier.PassEnv = []string{"OPENAI_API_KEY=HR_JUDGE"}
	var verifyEnv []string
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "verify" {
			verifyEnv = st.Env
			return fake.StepPlan{Lines: []string{"judging with " + judge}}
		}
		return fake.StepPlan{}
	}}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"HR_JUDGE": judge, "HOST_WIDE": "wide-value-123"}
	r := runSweep(t, b, cfg, context.Background(), nil).results["tb/judged@1x"]
	if !containsString(verifyEnv, "OPENAI_API_KEY="+judge) || !containsString(verifyEnv, "TASK_WIDE=wide-value-123") {
		t.Errorf("verifier env %v", verifyEnv)
	}
	if out := r.Steps[len(r.Steps)-1].Output; out != "judging with [redacted HR_JUDGE]" {
		t.Errorf("verifier output %q", out)
	}
}

// A traced loop of thousands of commands keeps its first and last
// commands as steps and folds those between into counts by command name:
// the record stays the size of a few hundred steps (#40.14).
func TestTracedLoopFoldsTheMiddleCommands(t *testing.T) {
	task := fake.Task("tb/loop", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve", Argv: []string{"/solution/solve.sh"}, Trace: true}}
	const iterations = 2000
	b := &fake.Backend{Script: stripBang(func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name != "/solution/solve.sh" {
			return fake.StepPlan{}
		}
		var lines []string
		last := 0
		for i := 1; i <= iterations; i++ {
			st := fmt.Sprint(last)
			lines = append(lines, "!"+fake.TraceLine(1, st+"|"+st+"|10|10|0|0", fmt.Sprintf("test %d -gt 0", i)))
			// The 1000th iteration's echo fails (a folded failure).
			last = 0
			lines = append(lines, "!"+fake.TraceLine(1, "0|0|10|10|0|0", fmt.Sprintf("echo %d", i)))
			if i == 1000 {
				last = 1
			}
		}
		lines = append(lines, "!"+fake.TraceLine(1, fmt.Sprintf("%d|%d|10|10|0|0", last, last), ": headroom-trace-end"))
		return fake.StepPlan{Lines: lines}
	})}
	res := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	r := res.results["tb/loop@1x"]
	var agent []model.StepResult
	for _, s := range r.Steps {
		if s.Phase == "agent" {
			agent = append(agent, s)
		}
	}
	if want := runner.TracedHeadSteps + 1 + runner.TracedTailSteps; len(agent) != want {
		t.Fatalf("%d agent steps, want %d (first, fold, last)", len(agent), want)
	}
	if agent[0].Name != "test 1 -gt 0" || agent[len(agent)-1].Name != fmt.Sprintf("echo %d", iterations) {
		t.Errorf("kept %q … %q, want the first and the last commands", agent[0].Name, agent[len(agent)-1].Name)
	}
	fold := agent[runner.TracedHeadSteps]
	folded := 2*iterations - runner.TracedHeadSteps - runner.TracedTailSteps
	if fold.Name != fmt.Sprintf("(%d commands folded)", folded) {
		t.Errorf("fold step named %q", fold.Name)
	}
	got := map[string]model.FoldedCommands{}
	for _, c := range fold.Folded {
		got[c.Command] = c
	}
	if got["test"].Count+got["echo"].Count != folded || len(fold.Folded) != 2 {
		t.Errorf("folded %+v, want %d commands of test and echo", fold.Folded, folded)
	}
	if got["echo"].Failures != 1 || got["test"].Failures != 0 {
		t.Errorf("folded failures: echo %d, test %d; want 1 and 0", got["echo"].Failures, got["test"].Failures)
	}
	if !strings.Contains(fold.Output, "echo: ") {
		t.Errorf("the fold's output does not list its commands: %q", fold.Output)
	}
	for _, s := range agent[runner.TracedHeadSteps+1:] {
		if s.ExitUnknown != "" || s.ExitCode != 0 {
			t.Errorf("kept last command %q: exit %d %q, want 0", s.Name, s.ExitCode, s.ExitUnknown)
		}
	}
	// Past the first commands, a start is said live at most four times a
	// second: at least the first, never one a command.
	said := 0
	for _, e := range res.events {
		if s, ok := e.(event.StepStarted); ok && s.Phase == "agent" {
			said++
		}
	}
	if light := said - runner.TracedHeadSteps; light < 1 || light > 100 {
		t.Errorf("%d live starts of %d commands past the first %d", light, 2*iterations-runner.TracedHeadSteps, runner.TracedHeadSteps)
	}
	if r.Outcome != model.Passed {
		t.Errorf("outcome %s (%s)", r.Outcome, r.Reason)
	}
}

// A separate verifier's artifacts that carry a reward the agent planted
// (`artifacts = ["/logs"]`: its /logs/verifier/reward.txt copied into
// the verifier's container) are cleared before its tests, as before a
// shared verifier: tests that crash write none, and it fails (it passed).
func TestASeparateVerifiersArtifactsCarryNoReward(t *testing.T) {
	for _, removes := range []bool{false, true} {
		t.Run(fmt.Sprintf("removes=%v", removes), func(t *testing.T) {
			task := fake.Task("tb/sepplanted", 64<<20, "solve")
			task.Verdict.Reward = &model.RewardRule{Dir: "/logs/verifier", Pass: 1}
			task.SeparateVerifier = &model.SeparateVerifier{Image: "verifier", Resources: task.Resources}
			task.Artifacts = []string{"/logs"}
			b := &fake.Backend{RemovesFiles: removes, CopyInWrites: map[string]string{"/logs/verifier/reward.txt": "1\n"},
				Script: script(map[string]fake.StepPlan{"tb/sepplanted/verify": {ExitCode: 2, Lines: []string{"the tests crashed before writing a reward"}}})}
			r := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil).results["tb/sepplanted@1x"]
			if r.Outcome != model.Failed || !strings.Contains(r.Reason, "the verifier wrote no reward") || r.Reward != nil {
				t.Fatalf("outcome %s (%s), reward %v; want failed, no reward", r.Outcome, r.Reason, r.Reward)
			}
		})
	}
}

// A command substitution is its command's work, in its command's step:
// the shell expands `want=$(sort …)` before it traces `+ want=…`, and the
// substitution's commands ran while the step before it was still the open
// one, so a kill of sort was charged to the mkdir before it (a new
// user's). The substitution opens the next command's step, named for it,
// shown with the command it was for.
func TestTracedSubstitutionIsItsCommandsWork(t *testing.T) {
	task := fake.Task("tb/subst", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve", Argv: []string{"/solution/solve.sh"}, Trace: true}}
	b := &fake.Backend{Script: stripBang(func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name != "/solution/solve.sh" {
			return fake.StepPlan{}
		}
		return fake.StepPlan{Lines: []string{
			// A sourced file's commands trace deeper by the script's own
			// shell ($$ = BASHPID): the source step's own, not a
			// substitution's.
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "source /tests/helpers.sh"),
			"!" + fake.TraceLine(2, "0|0|10|10|0|0", "apt-get update"),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "mkdir -p /logs/verifier"),
			"!" + fake.TraceLine(2, "0|0|11|10|0|0", "sort -u /app/events.log"),
			"!" + fake.TraceLine(2, "0|0|12|10|0|0", "wc -l"),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "want=73197"),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", "echo done"),
			"done",
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", ": headroom-trace-end"),
		}}
	})}
	res := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	r := res.results["tb/subst@1x"]
	var got []string
	for _, s := range r.Steps {
		if s.Phase == "agent" {
			got = append(got, fmt.Sprintf("%s | %s | %q", s.Name, s.Show, s.Output))
		}
	}
	want := []string{
		`source /tests/helpers.sh | source /tests/helpers.sh | "++ apt-get update"`,
		`mkdir -p /logs/verifier | mkdir -p /logs/verifier | ""`,
		`$(sort -u /app/events.log) | want=73197 ← $(sort -u /app/events.log) | "++ sort -u /app/events.log\n++ wc -l"`,
		`echo done | echo done | "done"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The command a substitution was for is shown cut, as every shown command
// is: `echo "$(head -c 50M …)"` traced a 50 MB command, and its step's
// shown command made the record line 2.3 MB (make hostile's output row).
func TestTracedSubstitutionShowIsCut(t *testing.T) {
	task := fake.Task("tb/subst-long", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve", Argv: []string{"/solution/solve.sh"}, Trace: true}}
	long := "echo " + strings.Repeat("y", 100_000)
	b := &fake.Backend{Script: stripBang(func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name != "/solution/solve.sh" {
			return fake.StepPlan{}
		}
		return fake.StepPlan{Lines: []string{
			"!" + fake.TraceLine(2, "0|0|11|10|0|0", "head -c 50000000 /dev/zero"),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", long),
			"!" + fake.TraceLine(1, "0|0|10|10|0|0", ": headroom-trace-end"),
		}}
	})}
	res := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	for _, s := range res.results["tb/subst-long@1x"].Steps {
		if len(s.Show) > runner.OutputLineBytes+8 {
			t.Errorf("step %s shows %d bytes, want at most about %d", s.Name, len(s.Show), runner.OutputLineBytes)
		}
	}
}

// A secret in a long line of output that a trace line cut (output that
// comes through a tee, which the trace bypasses: Harbor's verifier) is
// masked across the cut, in every event and record.
func TestSecretCutByATraceLineIsRedacted(t *testing.T) {
	const key = "Zq9s3cr3tVALUE0123456789"
	task := fake.Task("tb/secret-cut", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve.sh", Argv: []string{"/solution/solve.sh"}, Trace: true, PassEnv: []string{"API_KEY"}}}
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if !strings.HasSuffix(st.Name, "solve.sh") { // the fake names a step by its argv's last word
			return fake.StepPlan{}
		}
		return fake.StepPlan{Lines: []string{
			fake.TraceLine(1, "0|0|10|10||0", `printf '%s%s\n' "$A" "$MYKEY"`),
			strings.Repeat("a", 5000) + key[:7] + fake.TraceLine(1, "0|0|10|10||0", "declare -p MYKEY"),
			key[7:],
			"declare -x MYKEY=\"" + key + "\"",
			fake.TraceLine(1, "0|0|10|10||0", "echo done"),
			"done",
			fake.TraceLine(1, "0|0|10|10||0", ": headroom-trace-end"),
		}}
	}}
	cfg := config(t, []model.Task{task})
	cfg.Secrets = map[string]string{"API_KEY": key}
	res := runSweep(t, b, cfg, context.Background(), nil)
	for _, piece := range []string{key[:7], key[7:], key[1:7], key[7:14]} {
		for _, e := range res.events {
			if ol, ok := e.(event.OutputLine); ok && strings.Contains(ol.Text, piece) {
				t.Errorf("%q in an output event: %q", piece, ol.Text)
			}
		}
		for _, s := range res.results["tb/secret-cut@1x"].Steps {
			if strings.Contains(s.Output, piece) {
				t.Errorf("%q in step %s's output: %q", piece, s.Name, s.Output)
			}
		}
	}
}

// Output that comes through Harbor's verifier's tee after the script's
// end (its last line, the tee slower than the trace) is its last
// command's, not a step of the script's name after it (a CI rehearsal's
// TestOracleOfABuiltTaskAtOneXAndUncapped, 1 time in 1, while the oracle
// also ran through a tee).
func TestTeedOutputAfterTheEndIsTheLastCommands(t *testing.T) {
	task := fake.Task("tb/tee-late", 64<<20)
	task.Agents[0].Steps = []model.Step{{Name: "solve", Argv: []string{"/solution/solve.sh"}, Trace: true, TeeStdout: "/logs/agent/out.txt"}}
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if !strings.HasSuffix(st.Name, "solve.sh") {
			return fake.StepPlan{}
		}
		return fake.StepPlan{Lines: []string{
			fake.TraceLine(1, "0|0|10|10||0", "echo solving"),
			fake.TraceLine(1, "0|0|10|10||0", "echo finished"),
			"solving",
			fake.TraceLine(1, "0|0|10|10||0", ": headroom-trace-end"),
			"finished",
		}}
	}}
	res := runSweep(t, b, config(t, []model.Task{task}), context.Background(), nil)
	var got []string
	for _, s := range res.results["tb/tee-late@1x"].Steps {
		if s.Phase == "agent" {
			got = append(got, s.Name+" "+strconv.Quote(s.Output))
		}
	}
	if want := []string{`echo solving ""`, `echo finished "solving\nfinished"`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("agent steps %q, want %q", got, want)
	}
}
