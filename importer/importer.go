package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Options tune an import.
type Options struct {
	// PassReward is the reward a trial needs to pass (default 1).
	PassReward float64
	// AllowPartial imports a job's finished trials and leaves out, saying
	// so, those that never finished; without it such a job is refused.
	AllowPartial bool
	Command      []string
	Version      string
	Now          time.Time
}

// Import is an experiment read from other harnesses' runs, ready to write.
type Import struct {
	Manifest store.Manifest
	Trials   []model.TrialResult
	// Notes say what was left out and why.
	Notes []string
}

// Problems are what makes directories unimportable, one line each.
type Problems []string

func (p Problems) Error() string { return strings.Join(p, "\n") }

// trial is one imported trial before it has its place in the plan.
type trial struct {
	job, name    string
	task, agent  string
	ratio        model.Ratio
	policy       model.ResourcePolicy
	start, end   time.Time
	steps        []model.StepResult
	outcome      model.Outcome
	cause        model.Cause
	reason       string
	reward       *float64
	imported     model.Imported
	spec         *model.Resources
	format, path string
}

// assemble numbers the trials (repeats per task · agent · ratio, in the
// order they started) and writes the manifest around them.
func assemble(harness string, trials []trial, sources []store.ImportSource, o Options) Import {
	sort.SliceStable(trials, func(i, j int) bool {
		a, b := trials[i], trials[j]
		if !a.start.Equal(b.start) {
			return a.start.Before(b.start)
		}
		if a.job != b.job {
			return a.job < b.job
		}
		return a.name < b.name
	})
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	m := store.Manifest{ID: store.NewID(now), Created: now, Status: "finished", Command: o.Command, Version: o.Version,
		Engine: store.Engine{Backend: harness, Where: "imported", SampleSource: "none (imported: " + harness + " records no memory)",
			Details: map[string]string{"imported": harness}},
		Imported: sources}
	repeats := map[string]int{}
	ratios := map[model.Ratio]bool{}
	agents := map[string]bool{}
	tasks := map[string]*store.TaskEntry{}
	var order []string
	var first, last time.Time
	var out []model.TrialResult
	for i, t := range trials {
		key := t.task + "\x00" + t.agent + "\x00" + t.ratio.String()
		repeats[key]++
		ratios[t.ratio] = true
		agents[t.agent] = true
		if e, ok := tasks[t.task]; ok {
			if !contains(e.Agents, t.agent) {
				e.Agents = append(e.Agents, t.agent)
			}
		} else {
			e := &store.TaskEntry{Name: t.task, Source: t.path, Format: t.format, Agents: []string{t.agent}, Verdict: "reward-file"}
			if harness == "terminal-bench" {
				e.Verdict = "parser (as its run recorded it)"
			}
			if t.spec != nil {
				e.Resources = *t.spec
			}
			tasks[t.task] = e
			order = append(order, t.task)
		}
		if first.IsZero() || (!t.start.IsZero() && t.start.Before(first)) {
			first = t.start
		}
		if t.end.After(last) {
			last = t.end
		}
		t.policy.Ratio = t.ratio
		tr := model.Trial{ID: fmt.Sprintf("t%04d", i+1), Index: i, Task: t.task, Agent: t.agent, Ratio: t.ratio, Repeat: repeats[key], Policy: t.policy}
		imp := t.imported
		r := model.TrialResult{Trial: tr, Outcome: t.outcome, Cause: t.cause, Reason: t.reason, Start: t.start, End: t.end,
			Steps: t.steps, Reward: t.reward, Verdict: "imported", SampleSource: "none", Imported: &imp,
			// The verdict is the harness's own, as it recorded it.
			Grading: model.GradingHarness}
		if r.Steps == nil {
			r.Steps = []model.StepResult{}
		}
		out = append(out, r)
	}
	for r := range ratios {
		m.Ratios = append(m.Ratios, r)
	}
	sort.Slice(m.Ratios, func(i, j int) bool { return m.Ratios[i].Less(m.Ratios[j]) })
	for a := range agents {
		m.Agents = append(m.Agents, a)
	}
	sort.Strings(m.Agents)
	for _, n := range order {
		m.Tasks = append(m.Tasks, *tasks[n])
	}
	for _, n := range repeats {
		m.Repeats = max(m.Repeats, n)
	}
	m.Trials = len(out)
	if !first.IsZero() {
		m.Created = first
	}
	if !last.IsZero() {
		m.Finished = &last
	}
	return Import{Manifest: m, Trials: out}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Write writes an import as an experiment under root, all or nothing:
// it is written aside and renamed into place only when whole, so a
// failure leaves no half-written experiment for the History to open.
func Write(root string, im Import) (string, error) {
	if len(im.Trials) == 0 {
		return "", errors.New("nothing to import: no finished trial in the directories given")
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("experiment directory: %w (choose another with --out)", err)
	}
	removeDeadStages(root)
	stage, err := os.MkdirTemp(root, stagePrefix)
	if err != nil {
		return "", fmt.Errorf("experiment directory: %w (choose another with --out)", err)
	}
	defer os.RemoveAll(stage)
	// Held until the import is whole: a stage whose lock is free is a
	// killed import's, which the next import removes.
	lk, err := store.LockExperiment(stage)
	if err != nil {
		return "", err
	}
	defer lk.Unlock()
	exp, err := store.Create(stage, im.Manifest)
	if err != nil {
		return "", err
	}
	for _, r := range im.Trials {
		if err := exp.Append(r); err != nil {
			exp.Close()
			return "", fmt.Errorf("writing trial %s: %w", r.ID, err)
		}
	}
	if err := exp.Close(); err != nil {
		return "", err
	}
	dst := filepath.Join(root, im.Manifest.ID)
	if err := os.Rename(exp.Dir, dst); err != nil {
		return "", fmt.Errorf("moving the import into place: %w", err)
	}
	return dst, nil
}

// stagePrefix begins the name of the directory an import is written in
// before it is renamed into place.
const stagePrefix = ".importing-"

// removeDeadStages removes the stages of imports that were killed (a
// `kill -9` left its .importing-N behind, the twenty-fourth attacker's):
// those whose lock no process holds. A stage younger than a minute is
// left, whatever its lock: its import may have made it and not yet
// locked it.
func removeDeadStages(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), stagePrefix) {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		p := filepath.Join(root, e.Name())
		lk, err := store.LockExperiment(p)
		if err != nil {
			continue
		}
		_ = os.RemoveAll(p)
		lk.Unlock()
	}
}

// unknownNoTelemetry is what neither harness records about a trial.
var unknownNoTelemetry = []string{"memory trace", "kernel peak", "OOM kills as the kernel reported them", "per-command steps and their exit codes", "CPU use"}
