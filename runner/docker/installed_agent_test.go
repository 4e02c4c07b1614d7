package docker

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/agents"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// installedAgentTask is a task on the Debian cache image whose only agent
// is the named local definition from testdata/agents.
func installedAgentTask(t *testing.T, agent, memory string) model.Task {
	t.Helper()
	task := parseTask(t, `
[task]
name = "test/installed-`+agent+`"
[environment]
image = "`+DebianCacheImage+`"
memory = "`+memory+`"
idle_command = ["sleep", "infinity"]
[verifier]
command = ["test", "-f", "/tmp/solved"]
[[agents]]
name = "placeholder"
  [[agents.steps]]
  name = "nothing"
  command = ["true"]
`)
	task.Instruction = "Solve it."
	task.Agents = nil
	s := agents.DefaultSettings()
	s.Installed, s.AgentsDir = []string{agent}, "testdata/agents"
	tasks, _, err := s.Apply([]model.Task{task})
	if err != nil {
		t.Fatal(err)
	}
	return tasks[0]
}

// The mechanism end to end on the real engine: the install really
// installs python3-pandas from apt's cache as steps of the install phase;
// then the agent script's python3 child allocates past the 1x limit. The
// kill names the child's command line, not the script, and the stored
// tree holds both with their RSS; uncapped the same agent passes.
func TestInstalledAgentChildKillIsNamed(t *testing.T) {
	needEngine(t)
	needDebian(t)
	if ok, err := imageExists(context.Background(), testCli, DebianCacheImage); err != nil || !ok {
		t.Fatalf("%s is missing: make real-images", DebianCacheImage)
	}
	task := installedAgentTask(t, "pandas-child", "384M")
	var started []model.Activity
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{K: 1}, {Uncapped: true}}, 1, context.Background(), func(e event.Event) {
		if a, ok := e.(event.ActivityStarted); ok {
			started = append(started, a.Activity)
		}
	})
	r := byRatio(results)
	tight, free := r["1x"], r["uncapped"]
	for _, res := range []model.TrialResult{tight, free} {
		if res.ProcessSource != "proc" {
			t.Errorf("%s: process source %q, want proc", res.Ratio, res.ProcessSource)
		}
		for _, s := range res.Steps {
			t.Logf("%s %s: %s exit %d %s\n%s", res.Ratio, s.Phase, s.Name, s.ExitCode, s.Duration(), s.Output)
		}
		if res.Install == nil || res.Install.Steps < 2 || res.Install.OOMKills != 0 {
			t.Fatalf("%s: install phase %+v, want its 2 commands and no kill (%s)", res.Ratio, res.Install, res.Reason)
		}
		var phases []string
		for _, s := range res.Steps {
			phases = append(phases, s.Phase+":"+s.Name)
		}
		if !strings.HasPrefix(phases[0], "install:apt-get install") || !slices.Contains(phases, "agent:sh /headroom/agent/agent.sh") {
			t.Errorf("%s: steps %q", res.Ratio, phases)
		}
	}
	if tight.Outcome != model.OOMKilled || len(tight.OOMs) == 0 {
		t.Fatalf("1x: %s (%s), want oom-killed", tight.Outcome, tight.Reason)
	}
	k := tight.OOMs[0]
	if !strings.HasPrefix(k.Command, "python3 -c import time") || k.Step != "sh /headroom/agent/agent.sh" {
		t.Errorf("1x: the kill names %q in step %q, want the python3 -c child in the agent script's step", k.Command, k.Step)
	}
	var script, child *model.ProcessInfo
	for i, p := range k.Tree {
		switch {
		case strings.HasPrefix(p.Command, "sh /headroom/agent/agent.sh"):
			script = &k.Tree[i]
		case strings.HasPrefix(p.Command, "python3 -c"):
			child = &k.Tree[i]
		}
	}
	// The script's own RSS is not asserted: a small process's resident
	// count is the kernel's per-CPU counters read approximately (6.2+),
	// and can read 0 (a CI run saw it); the child's hundreds of MiB cannot.
	if script == nil || child == nil || child.RSSBytes < 128*model.MiB || child.PPID != script.PID {
		t.Errorf("1x: the tree at the kill %+v, want the agent script and its python3 child with its RSS", k.Tree)
	}
	var act *model.Activity
	for i, a := range tight.Activities {
		if strings.HasPrefix(a.Command, "python3 -c") {
			act = &tight.Activities[i]
		}
	}
	if act == nil || !act.OOMKilled || act.PeakRSSBytes < 128*model.MiB || act.Step != "sh /headroom/agent/agent.sh" || act.End.IsZero() {
		t.Errorf("1x: the child's activity %+v, want it killed, ended, with its peak, under the script's step", act)
	}
	if !slices.ContainsFunc(started, func(a model.Activity) bool { return strings.HasPrefix(a.Command, "apt-get install") && a.Step != "" }) {
		t.Errorf("no activity event for the install's apt-get: %+v", started)
	}
	if free.Outcome != model.Passed {
		t.Errorf("uncapped: %s (%s), want passed", free.Outcome, free.Reason)
	}
	t.Logf("1x: killed %q (pid %d, kernel says %q rss %s); tree %d procs; %d activities; install %s peak %s",
		k.Command, k.PID, k.Process, model.FormatBytes(k.RSSBytes), len(k.Tree), len(tight.Activities), time.Duration(tight.Install.Duration), model.FormatBytes(tight.Install.PeakWorkingSetBytes))
}

// Hundreds of short children stay bounded: at most MaxActivities recorded,
// the rest counted, and the record stays small.
func TestForkHeavyAgentStaysBounded(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := installedAgentTask(t, "fork-heavy", "256M")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	results, evs := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	runtime.GC()
	runtime.ReadMemStats(&after)
	res := results[0]
	if res.Outcome != model.Passed {
		t.Fatalf("%s (%s)", res.Outcome, res.Reason)
	}
	data, _ := json.Marshal(res)
	var actEvents int
	for _, e := range evs {
		switch e.(type) {
		case event.ActivityStarted, event.ActivityEnded:
			actEvents++
		}
	}
	if len(res.Activities) > runner.MaxActivities || len(res.Activities)+res.ActivitiesDropped < 250 {
		t.Errorf("%d activities recorded, %d dropped: want at most %d recorded and the 300 long children counted", len(res.Activities), res.ActivitiesDropped, runner.MaxActivities)
	}
	if len(data) > 256<<10 {
		t.Errorf("the record is %d bytes", len(data))
	}
	t.Logf("fork-heavy: %d activities recorded, %d dropped, %d processes unread in the fullest sample, %d activity events, record %d bytes, trial %s, test heap %s before and %s after (every event kept)",
		len(res.Activities), res.ActivitiesDropped, res.ProcessesUnread, actEvents, len(data), res.End.Sub(res.Start),
		model.FormatBytes(int64(before.HeapInuse)), model.FormatBytes(int64(after.HeapInuse)))
}
