package replay

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload"
)

// AgentName is the replay agent's name in a replayed task.
const AgentName = "replay"

// In the container: where the replayer (headroom's static in-container
// program) is copied, and the terminal's socket directory.
const (
	binDir  = "/.headroom-replay"
	termDir = "/tmp/.headroom-term"
)

var replayer = binDir + "/hr-workload"

// ThinkTime scales the recorded think time: 1 keeps it, 0 drops it.
type ThinkTime float64

// ParseThinkTime reads --think-time: "recorded", "0", or a factor "×2",
// "x0.5", "2x", "2".
func ParseThinkTime(s string) (ThinkTime, error) {
	v := strings.TrimSpace(strings.ToLower(s))
	if v == "recorded" || v == "" {
		return 1, nil
	}
	v = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(v, "×"), "x"), "x")
	k, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(k) || k < 0 || k > 100 { // NaN is neither < 0 nor > 100
		return 0, fmt.Errorf("think time %q: want recorded, 0 or a factor such as ×2 or x0.5 (0 to 100)", s)
	}
	return ThinkTime(k), nil
}

func (t ThinkTime) String() string {
	switch t {
	case 1:
		return "recorded"
	case 0:
		return "0"
	}
	return "×" + strconv.FormatFloat(float64(t), 'g', -1, 64)
}

// Options say how a recording is replayed.
type Options struct {
	// Binary is the host's static in-container program (hr-workload),
	// copied into the container before the first action.
	Binary string
	Think  ThinkTime
}

// Agent is the recording as an agent: one step per recorded action,
// named after its command, so a kill, a peak or a stall is charged to
// the action that caused it; a terminal recording first opens its
// terminal.
func Agent(rec Recording, o Options) model.Agent {
	a := model.Agent{Name: AgentName, Description: fmt.Sprintf("replays %s (%s, %d actions, think time %s)", rec.Source(), rec.Agent, len(rec.Actions), o.Think)}
	copyIn := []model.Upload{{From: o.Binary, To: binDir, Name: "hr-workload"}}
	if rec.Terminal {
		a.Steps = append(a.Steps, model.Step{
			Name:  "open terminal",
			Show:  "a shell in a 160x40 pseudo-terminal, as the harness's tmux pane (hr-workload term start)",
			Argv:  []string{replayer, workload.TermMode, "start", "--dir", termDir},
			Files: copyIn,
		})
		copyIn = nil
	}
	n := len(rec.Actions)
	for i, act := range rec.Actions {
		think := time.Duration(float64(act.Think) * float64(o.Think)).Round(time.Millisecond)
		s := model.Step{Name: act.Label(), Expected: act.Wait + think, Files: copyIn}
		copyIn = nil
		if rec.Terminal {
			s.Show = fmt.Sprintf("[%d/%d] keys %s", i+1, n, showKeys(act.Keys))
			s.Argv = []string{replayer, workload.TermMode, "keys", "--dir", termDir, "--wait", act.Wait.String(), "--think", think.String()}
			if act.Blocking {
				s.Argv = append(s.Argv, "--until-idle")
			}
			s.Argv = append(append(s.Argv, "--"), act.Keys...)
		} else {
			s.Show = fmt.Sprintf("[%d/%d] %s", i+1, n, act.Command)
			s.Argv = []string{replayer, workload.TermMode, "exec", "--think", think.String(), "--", "bash", "-c", act.Command}
		}
		a.Steps = append(a.Steps, s)
	}
	return a
}

// showKeys is keys as a reader sees them: literal text quoted, key names
// bare ("pip install pandas" Enter, C-c).
func showKeys(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if workload.TmuxKey(k) != k {
			parts[i] = k
		} else {
			parts[i] = strconv.Quote(k)
		}
	}
	return strings.Join(parts, " ")
}

// maxRecordedSeconds bounds a time a recording gives (a wait, an
// event's time): a week, past any agent's time limit; more overflowed a
// duration.
const maxRecordedSeconds = 7 * 24 * 3600

// CapThink is rec with every gap between actions (think time) that is
// longer than the agent's own time limit (task's agent timeout, as the
// recording's harness gave it) cut to that limit, and a note saying
// so: no run of the recorded agent could wait that long between two
// actions and go on, so such a gap is a recording's clock, not its
// agent (two steps 100 years apart timed out at every ratio). The gap
// as recorded is cut; --think-time scales what is left.
func CapThink(rec Recording, task model.Task, think ThinkTime) Recording {
	limit := task.AgentTimeout
	if limit <= 0 {
		limit = model.DefaultAgentTimeout
	}
	var cut []string
	longest := time.Duration(0)
	for i, act := range rec.Actions {
		if act.Think <= limit {
			continue
		}
		if len(cut) == 0 {
			rec.Actions = slices.Clone(rec.Actions)
		}
		longest = max(longest, act.Think)
		cut = append(cut, strconv.Itoa(i+1))
		rec.Actions[i].Think = limit
	}
	if len(cut) == 0 {
		return thinkPastLimit(rec, limit, think)
	}
	n := len(cut)
	if n > 5 {
		cut = append(cut[:5], "…")
	}
	rec.ThinkCapped = fmt.Sprintf("%s (after action %s) longer than the agent's time limit (%s; the longest %s) cut to it",
		model.Quantity(n, "recorded think-time gap"), strings.Join(cut, ", "), limit, longest.Round(time.Second))
	rec.Notes = append(slices.Clone(rec.Notes), rec.ThinkCapped)
	return thinkPastLimit(rec, limit, think)
}

// thinkPastLimit notes (in ThinkCapped, which the record and the report
// carry) a recording whose think time, as --think-time scales it, is
// longer in all than the agent's time limit: every replay of it times
// out, and the report blamed its actions' non-determinism for what the
// factor given did (the twenty-ninth attacker's 4).
func thinkPastLimit(rec Recording, limit time.Duration, think ThinkTime) Recording {
	var total time.Duration
	for _, act := range rec.Actions {
		total += time.Duration(float64(act.Think) * float64(think))
	}
	if total <= limit {
		return rec
	}
	note := fmt.Sprintf("its think time with --think-time %s is %s in all, longer than the agent's time limit (%s): every replay times out", think, total.Round(time.Second), limit)
	rec.ThinkCapped = strings.TrimPrefix(rec.ThinkCapped+"; "+note, "; ")
	rec.Notes = append(slices.Clone(rec.Notes), note)
	return rec
}

// Task is task (the recording's own task, loaded from its directory) made
// to replay rec: named after the recorded trial, so a job's trajectories
// are the rows of the matrix, with the replay as its only agent.
func Task(rec Recording, task model.Task, o Options) model.Task {
	t := task
	t.Name = rec.Trial
	t.Description = fmt.Sprintf("%s replayed from %s", task.Name, rec.Source())
	t.Agents = []model.Agent{Agent(rec, o)}
	return t
}

// Source names the recording as records do: "harbor JOB/TRIAL".
func (r Recording) Source() string {
	return r.Harness + " " + r.Job + "/" + r.Trial
}
