package replay

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/workload"
)

// OutputAlike is the similarity below which an action's output counts as
// diverged: loose on purpose (times, sizes, ids and download speeds
// differ from run to run; an error instead of a listing does not).
const OutputAlike = 0.3

// compareLines is how many of an output's first lines are compared.
const compareLines = 20

// Diverge compares a replayed trial with its recording, action by
// action. The first divergence named is the first action killed, timed
// out, whose terminal ended or whose exit status differs; without one,
// the first whose output differs (an output is weaker evidence, and an
// early harmless difference must not hide a kill).
func Diverge(rec Recording, res model.TrialResult) *model.ReplayRecord {
	r := &model.ReplayRecord{Source: rec.Source(), Actions: len(rec.Actions), RecordedOutcome: rec.Outcome, ThinkCapped: rec.ThinkCapped}
	var steps []model.StepResult
	for _, s := range res.Steps {
		if s.Phase == model.PhaseAgent {
			steps = append(steps, s)
		}
	}
	if rec.Terminal && len(steps) > 0 {
		open := steps[0]
		steps = steps[1:]
		if open.Failed() || open.OOMKills > 0 || open.TimedOut {
			r.Divergence = &model.Divergence{Action: 1, Command: actionLabel(rec, 0), Kind: model.DivergedTerminal,
				Detail: "the terminal did not open (" + firstLine(open.Output, "exit "+open.ExitText()) + ")"}
			return r
		}
	}
	var hard, soft *model.Divergence
	for i, s := range steps {
		if i >= len(rec.Actions) {
			break
		}
		r.Ran++
		act := rec.Actions[i]
		here := stepOutput(s.Output)
		sim := -1.0
		if strings.TrimSpace(act.Output) != "" {
			sim = Similarity(act.Output, here)
		}
		r.Similarity = append(r.Similarity, sim)
		if hard != nil {
			continue
		}
		d := model.Divergence{Action: i + 1, Command: act.Label()}
		switch {
		case s.OOMKills > 0:
			d.Kind, d.Detail = model.DivergedOOM, "OOM-killed"+killedWhat(res, s)
		case s.TimedOut:
			d.Kind, d.Detail = model.DivergedTimeout, "the agent's time limit ran out in it"
		case rec.Terminal && (s.ExitCode == workload.TermGone || s.ExitCode == workload.TermShellExited):
			d.Kind, d.Detail = model.DivergedTerminal, firstLine(noteLines(s.Output), "the terminal ended")
		case !rec.Terminal && act.Exit != nil && s.ExitUnknown == "" && s.ExitCode != *act.Exit:
			d.Kind, d.Detail = model.DivergedExit, fmt.Sprintf("exit %d, recorded %d", s.ExitCode, *act.Exit)
		case sim >= 0 && sim < OutputAlike && soft == nil:
			od := d
			od.Kind, od.Detail = model.DivergedOutput, fmt.Sprintf("output differs (similarity %.2f): `%s` here, `%s` recorded", sim, distinctLine(here, act.Output), distinctLine(act.Output, here))
			soft = &od
			continue
		default:
			continue
		}
		hard = &d
	}
	switch {
	case hard != nil:
		r.Divergence = hard
	case soft != nil:
		r.Divergence = soft
	case r.Ran < len(rec.Actions):
		why := "the trial ended before it"
		if res.Outcome != "" {
			why = fmt.Sprintf("the trial ended before it (%s)", res.Outcome)
		}
		r.Divergence = &model.Divergence{Action: r.Ran + 1, Command: actionLabel(rec, r.Ran), Kind: model.DivergedNotRun, Detail: "did not run: " + why}
	}
	return r
}

func actionLabel(rec Recording, i int) string {
	if i < len(rec.Actions) {
		return rec.Actions[i].Label()
	}
	return ""
}

// killedWhat is what the kernel killed in step s, when the record knows.
func killedWhat(res model.TrialResult, s model.StepResult) string {
	peak := ""
	if s.PeakWorkingSetBytes > 0 {
		peak = ", peak " + model.FormatBytes(s.PeakWorkingSetBytes)
	}
	for _, o := range res.OOMs {
		if o.Step == s.Name && o.Process != "" {
			return fmt.Sprintf(" (%s killed%s)", o.Process, peak)
		}
	}
	if peak != "" {
		return " (" + strings.TrimPrefix(peak, ", ") + ")"
	}
	return ""
}

// stepOutput is a replayed step's output without the terminal's own notes.
func stepOutput(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, workload.TermNote) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// noteLines are the terminal's own notes in a step's output, without
// their prefix.
func noteLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if note, ok := strings.CutPrefix(l, workload.TermNote); ok {
			keep = append(keep, strings.TrimSpace(note))
		}
	}
	return strings.Join(keep, "\n")
}

func firstLine(s, none string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if r := []rune(l); len(r) > 80 {
				l = string(r[:79]) + "…"
			}
			return l
		}
	}
	return none
}

// distinctLine is the first line of s the other output does not have
// (compared as Similarity compares: words, numbers masked), cut to 80
// characters.
func distinctLine(s, other string) string {
	seen := map[string]bool{}
	for _, l := range outputLines(other) {
		seen[lineKey(l)] = true
	}
	for _, l := range outputLines(s) {
		if !seen[lineKey(l)] {
			return firstLine(l, "")
		}
	}
	return "nothing else"
}

// outputLines are an output's lines as compared: cleaned, trimmed, the
// terminus header, shell prompts (their host names differ from
// container to container) and empty lines left out.
func outputLines(s string) []string {
	var out []string
	for _, l := range strings.Split(workload.CleanTerminal(s), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), terminusHeader))
		if l = strings.TrimSpace(prompt.ReplaceAllString(l, "")); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func lineKey(l string) string {
	ws := words.FindAllString(strings.ToLower(l), -1)
	for i, w := range ws {
		ws[i] = numbers.ReplaceAllString(w, "#")
	}
	return strings.Join(ws, " ")
}

var (
	prompt  = regexp.MustCompile(`^[\w.-]+@[\w.-]+:[^#$\s]*[#$]`)
	numbers = regexp.MustCompile(`[0-9a-f]*[0-9][0-9a-f]*`)
	words   = regexp.MustCompile(`[\pL\pN_./-]+`)
)

// terminusHeader starts terminus-2's observations; it is not output.
const terminusHeader = "New Terminal Output:"

// Similarity compares two outputs loosely: the words of their first
// lines, numbers and hex ids masked, as sets (Jaccard, 0..1); two empty
// outputs are alike.
func Similarity(recorded, here string) float64 {
	a, b := wordSet(recorded), wordSet(here)
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	lines := outputLines(s)
	for _, l := range lines[:min(len(lines), compareLines)] {
		for _, w := range strings.Fields(lineKey(l)) {
			set[w] = true
		}
	}
	return set
}
