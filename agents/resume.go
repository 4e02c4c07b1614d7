package agents

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/taskfile"
)

// ResumeTasks reloads an experiment's tasks from where they came from and
// sets their agents up as the run did (command agent, installed agents,
// scales), keeping only the agents the experiment ran. It returns the
// secrets those agents pass, read again from headroom's environment.
func ResumeTasks(m store.Manifest) ([]model.Task, map[string]string, error) {
	return recordedTasks(m, true)
}

// RecordedTasks are an experiment's tasks as ResumeTasks reloads them,
// for a comparison with what the experiment recorded (store.TaskEntry.
// Changes), without reading the secrets their agents pass: nothing will
// run them.
func RecordedTasks(m store.Manifest) ([]model.Task, error) {
	tasks, _, err := recordedTasks(m, false)
	return tasks, err
}

func recordedTasks(m store.Manifest, secretsNeeded bool) ([]model.Task, map[string]string, error) {
	builtin, err := taskfile.Builtin()
	if err != nil {
		return nil, nil, err
	}
	settings := FromRecord(m.AgentSettings)
	secrets := map[string]string{}
	var tasks []model.Task
	for _, e := range m.Tasks {
		var t model.Task
		if e.SourcePath != "" {
			// Where the task was, wherever this resume runs from.
			e.Source = e.SourcePath
		}
		if taskfile.IsBuiltin(model.Task{Source: e.Source}) {
			if t, err = builtin.Find(e.Name); err != nil {
				return nil, nil, inputf("resume: built-in task %s no longer exists in this headroom", e.Name)
			}
		} else if dir := filepath.Dir(e.Source); e.Format == model.FormatHarbor || e.Format == model.FormatTerminalBench {
			l, err := taskfile.LoadTaskDir(dir)
			if err != nil {
				return nil, nil, inputf("resume: task %s: %v", e.Name, err)
			}
			t = l.Task
		} else {
			data, err := os.ReadFile(e.Source)
			if err != nil {
				return nil, nil, inputf("resume: task %s: %v", e.Name, err)
			}
			l, err := taskfile.Parse(e.Source, data)
			if err != nil {
				return nil, nil, InputError{err}
			}
			t = l.Task
		}
		applied, s, err := settings.Apply([]model.Task{t})
		if err != nil {
			return nil, nil, fmt.Errorf("resume: the experiment's agent settings: %w", err)
		}
		t = applied[0]
		// The profile the trials ran under; an experiment from before
		// profiles existed ran hardened.
		t.SetProfile(cmp.Or(e.Profile, model.ProfileHardened))
		maps.Copy(secrets, s)
		var agents []model.Agent
		for _, name := range e.Agents {
			a, ok := t.Agent(name)
			if !ok {
				return nil, nil, inputf("resume: task %s no longer has agent %s", e.Name, name)
			}
			agents = append(agents, a)
		}
		t.Agents = agents
		// Only the secrets of the agents that ran are needed again.
		if _, problems := TaskSecrets([]model.Task{t}, secrets, settings.PassEnv); secretsNeeded && len(problems) > 0 {
			return nil, nil, inputf("resume: %v", problems[0])
		}
		tasks = append(tasks, t)
	}
	return tasks, secrets, nil
}
