package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/internal/exactjson"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/taskfile"
)

// Found is what a directory holds: the recordings that can be replayed,
// and the trials that cannot, with why.
type Found struct {
	Recordings []Recording
	Refused    []Refusal
}

// Load reads a Harbor trial or job directory, or a terminal-bench trial
// or run directory. A directory that is none of them is an error; a
// trial in it that cannot be replayed is a Refusal.
func Load(dir string) (Found, error) {
	var f Found
	info, err := os.Stat(dir)
	if err != nil {
		return f, fmt.Errorf("read %s: %w", dir, err)
	}
	if !info.IsDir() {
		return f, fmt.Errorf("%s is a file: give a trial's directory or a job's (run's)", dir)
	}
	seen := map[confine.ID]string{}
	add := func(rec Recording, err error, trial string) {
		var refusal Refusal
		switch {
		case errors.As(err, &refusal):
			f.Refused = append(f.Refused, refusal)
		case err != nil:
			f.Refused = append(f.Refused, Refusal{Dir: trial, Why: err.Error()})
		default:
			// Two trials' actions from one file (hard links, or links
			// within the run): one recording given twice, refused as
			// import refuses a trial given twice. Each had been parsed
			// and held: 4 trials linked to one 64 MiB commands.txt took
			// 5.9 GB (the thirty-second attacker's 2).
			if rec.from != "" {
				if other, dup := seen[rec.fromID]; dup {
					f.Refused = append(f.Refused, Refusal{Dir: trial, Why: fmt.Sprintf("%s is the same file as %s: a harness writes one recording per trial; give each trial's own", rec.from, other)})
					return
				}
				seen[rec.fromID] = rec.from
			}
			f.Recordings = append(f.Recordings, rec)
		}
	}
	switch {
	case isHarborTrial(dir):
		rec, err := loadHarborTrial(dir)
		add(rec, err, dir)
	case isTBTrial(dir):
		rec, err := loadTBTrial(dir)
		add(rec, err, dir)
	default:
		trials, harness := jobTrials(dir)
		if len(trials) == 0 {
			return f, fmt.Errorf("%s holds no Harbor trial (result.json with agent/trajectory.json) nor terminal-bench trial (commands.txt, sessions/agent.cast): give a trial's directory or its job's", dir)
		}
		for _, t := range trials {
			if harness == "harbor" {
				rec, err := loadHarborTrial(t)
				add(rec, err, t)
			} else {
				rec, err := loadTBTrial(t)
				add(rec, err, t)
			}
		}
	}
	return f, nil
}

// from is where actions were read from, with its identity ("" where it
// cannot be looked at), for telling one file given twice.
func from(rec *Recording, p string) {
	if id, ok := confine.Identity(p); ok {
		rec.from, rec.fromID = p, id
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func isHarborTrial(dir string) bool {
	return exists(filepath.Join(dir, "result.json")) && !hasTrialDirs(dir)
}

func isTBTrial(dir string) bool {
	return exists(filepath.Join(dir, "commands.txt")) || exists(filepath.Join(dir, "sessions", "agent.cast"))
}

func hasTrialDirs(dir string) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(dir, e.Name(), "result.json")) {
			return true
		}
	}
	return false
}

// jobTrials are a job's trial directories, in name order: a Harbor job's
// children with result.json, or a terminal-bench run's task/trial
// directories.
func jobTrials(dir string) ([]string, string) {
	var harbor, tb []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		child := filepath.Join(dir, e.Name())
		if isHarborTrial(child) {
			harbor = append(harbor, child)
			continue
		}
		sub, _ := os.ReadDir(child)
		for _, s := range sub {
			if s.IsDir() && isTBTrial(filepath.Join(child, s.Name())) {
				tb = append(tb, filepath.Join(child, s.Name()))
			}
		}
	}
	sort.Strings(harbor)
	sort.Strings(tb)
	if len(harbor) >= len(tb) {
		return harbor, "harbor"
	}
	return tb, "terminal-bench"
}

// harborTrialResult is what a replay reads of a Harbor trial's result.json.
type harborTrialResult struct {
	TaskName  string `json:"task_name"`
	TrialName string `json:"trial_name"`
	Config    struct {
		Task struct {
			Path string `json:"path"`
		} `json:"task"`
		Agent struct {
			Name      string `json:"name"`
			ModelName string `json:"model_name"`
		} `json:"agent"`
	} `json:"config"`
	VerifierResult *struct {
		Rewards model.RecordedRewards `json:"rewards"`
	} `json:"verifier_result"`
}

func loadHarborTrial(dir string) (Recording, error) {
	rec := Recording{Harness: "harbor", Dir: dir, Job: filepath.Dir(dir), Trial: filepath.Base(dir)}
	data, err := readRecorded(rec.Job, filepath.Join(dir, "result.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, Refusal{dir, "no result.json: the trial did not finish"}
	}
	if err != nil {
		return rec, Refusal{dir, err.Error()}
	}
	var r harborTrialResult
	if err := exactjson.Unmarshal(data, &r); err != nil {
		return rec, Refusal{dir, fmt.Sprintf("result.json is not a Harbor trial result: %v", err)}
	}
	if r.TrialName != "" {
		rec.Trial = r.TrialName
	}
	rec.Task, rec.TaskPath = r.TaskName, r.Config.Task.Path
	if rec.Task == "" && rec.TaskPath != "" {
		rec.Task = filepath.Base(rec.TaskPath)
	}
	trialField, taskField := "trial_name", "task_name"
	if r.TrialName == "" {
		trialField = "" // the trial directory's name
	}
	if r.TaskName == "" {
		taskField = "config.task.path"
	}
	if err := recordedNames(dir, "result.json", trialField, rec.Trial, taskField, rec.Task); err != nil {
		return rec, err
	}
	rec.Outcome = harborVerdict(r)
	traj := filepath.Join(dir, "agent", "trajectory.json")
	tdata, err := readRecorded(rec.Job, traj)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, Refusal{dir, err.Error()}
	}
	if err != nil {
		agent := r.Config.Agent.Name
		if agent == "" {
			agent = "its agent"
		}
		return rec, Refusal{dir, fmt.Sprintf("no agent/trajectory.json: %s wrote no ATIF trajectory, so its actions are not on disk", agent)}
	}
	parsed, err := parseATIF(tdata, traj)
	if err != nil {
		return rec, Refusal{dir, err.Error()}
	}
	rec.Agent, rec.Model, rec.Terminal, rec.Actions, rec.Notes = parsed.Agent, parsed.Model, parsed.Terminal, parsed.Actions, parsed.Notes
	from(&rec, traj)
	if rec.Agent == "" {
		rec.Agent = r.Config.Agent.Name
	}
	if rec.Model == "" {
		rec.Model = r.Config.Agent.ModelName
	}
	rec.Agent, rec.Model = printable.Line(rec.Agent), printable.Line(rec.Model)
	return rec, nil
}

// harborVerdict is Harbor's grade: the reward ("reward", else the
// smallest) reaching 1 passes; no verifier result, no verdict.
func harborVerdict(r harborTrialResult) string {
	if r.VerifierResult == nil || len(r.VerifierResult.Rewards) == 0 {
		return ""
	}
	rw, ok := r.VerifierResult.Rewards["reward"]
	if !ok {
		rw = math.Inf(1)
		for _, v := range r.VerifierResult.Rewards {
			rw = math.Min(rw, v)
		}
	}
	if rw >= 1 {
		return "passed"
	}
	return "failed"
}

// tbTrialResult is what a replay reads of a terminal-bench trial's
// results.json.
type tbTrialResult struct {
	TrialName  string `json:"trial_name"`
	TaskID     string `json:"task_id"`
	IsResolved *bool  `json:"is_resolved"`
}

func loadTBTrial(dir string) (Recording, error) {
	rec := Recording{Harness: "terminal-bench", Dir: dir, Job: filepath.Dir(filepath.Dir(dir)), Trial: filepath.Base(dir), Task: filepath.Base(filepath.Dir(dir)), Terminal: true}
	data, err := readRecorded(rec.Job, filepath.Join(dir, "results.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, Refusal{dir, err.Error()}
	}
	var r tbTrialResult
	if err == nil {
		if err := exactjson.Unmarshal(data, &r); err != nil {
			return rec, Refusal{dir, fmt.Sprintf("results.json is not a terminal-bench trial result: %v", err)}
		}
		if r.TaskID != "" {
			rec.Task = r.TaskID
		}
		if r.TrialName != "" {
			rec.Trial = r.TrialName
		}
		if r.IsResolved != nil {
			rec.Outcome = map[bool]string{true: "passed", false: "failed"}[*r.IsResolved]
		}
	} else {
		rec.Notes = append(rec.Notes, "no results.json: the recording's verdict is unknown")
	}
	if err := recordedNames(dir, "results.json", tbField(r.TrialName, "trial_name"), rec.Trial, tbField(r.TaskID, "task_id"), rec.Task); err != nil {
		return rec, err
	}
	var meta struct {
		AgentName   string  `json:"agent_name"`
		ModelName   *string `json:"model_name"`
		DatasetPath string  `json:"dataset_path"`
	}
	data, err = readRecorded(rec.Job, filepath.Join(rec.Job, "run_metadata.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, Refusal{dir, err.Error()}
	}
	if err == nil && json.Unmarshal(data, &meta) == nil {
		rec.Agent = meta.AgentName
		if meta.ModelName != nil {
			rec.Model = *meta.ModelName
		}
		rec.Agent, rec.Model = printable.Line(rec.Agent), printable.Line(rec.Model)
		if meta.DatasetPath != "" {
			rec.TaskPath = filepath.Join(meta.DatasetPath, rec.Task)
		}
	}
	cast := filepath.Join(dir, "sessions", "agent.cast")
	cmds := filepath.Join(dir, "commands.txt")
	data, rerr := readRecorded(rec.Job, cast)
	if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return rec, Refusal{dir, rerr.Error()}
	}
	if rerr == nil {
		var events []castEvent
		if events, err = parseCast(data, cast); err != nil {
			return rec, Refusal{dir, err.Error()}
		}
		if rec.Actions, err = castActions(events, cast); err != nil {
			return rec, Refusal{dir, err.Error()}
		}
		from(&rec, cast)
		if len(rec.Actions) == 0 {
			rec.Notes = append(rec.Notes, "agent.cast recorded no typed keys: the keys are commands.txt's, without timing")
		}
	}
	if len(rec.Actions) == 0 {
		data, rerr := readRecorded(rec.Job, cmds)
		if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return rec, Refusal{dir, rerr.Error()}
		}
		if rerr != nil {
			return rec, Refusal{dir, "neither sessions/agent.cast nor commands.txt: the agent's keys are not on disk"}
		}
		if rec.Actions, err = commandsActions(data, cmds); err != nil {
			return rec, Refusal{dir, err.Error()}
		}
		from(&rec, cmds)
		rec.Notes = append(rec.Notes, "no typed keys in a cast: each command waits for its prompt, no think time, no recorded output to compare")
	}
	for i, a := range rec.Actions {
		if len(a.Keys) > 0 && strings.HasPrefix(a.Keys[0], installedAgentPrefix) {
			invocation := ""
			for _, b := range rec.Actions[i+1:] {
				if len(b.Keys) > 0 && !strings.HasPrefix(b.Keys[0], installedAgentPrefix) {
					invocation = b.Label()
					break
				}
			}
			if invocation == "" {
				return rec, Refusal{dir, "an installed agent that never started: the pane holds only its install"}
			}
			return rec, Refusal{dir, fmt.Sprintf("an installed agent: the pane holds only its invocation (`%s`), not the actions it took inside it", invocation)}
		}
	}
	if len(rec.Actions) == 0 {
		return rec, Refusal{dir, "the agent typed nothing into its pane (its keys are empty past the harness's own)"}
	}
	return rec, nil
}

// recordedNames refuses a trial whose recorded trial or task name is not
// one line of printable text, as a task file's names are refused: the
// replay runs the trial as a task of that name, shown on every progress
// line, matrix row and --list line, so a trial_name holding
// "\n experiment FAKE" printed a line headroom never wrote. A field ""
// is the name of the trial's directory (or the task's, for the task),
// not a field of file.
func recordedNames(dir, file, trialField, trial, taskField, task string) error {
	for _, n := range []struct{ field, dirName, name string }{
		{trialField, "the trial directory's name", trial},
		{taskField, "the task directory's name", task},
	} {
		what := file + "'s " + n.field
		if n.field == "" {
			what = n.dirName
		}
		if err := taskfile.CheckName(what, n.name); err != nil {
			where := filepath.Join(dir, file)
			if n.field == "" {
				where = dir
			}
			return Refusal{dir, fmt.Sprintf("%s: %v (replay runs the trial under its recorded names)", where, err)}
		}
	}
	return nil
}

// tbField is the results.json field a terminal-bench name came from, or
// "" when the name is a directory's.
func tbField(value, field string) string {
	if value == "" {
		return ""
	}
	return field
}
