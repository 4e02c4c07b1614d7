package ui

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// endActivity updates an activity already listed (its process is gone,
// or an exec changed its command); false when it is not listed.
func (t *TrialView) endActivity(a model.Activity) bool {
	for i := len(t.Activities) - 1; i >= 0; i-- {
		if t.Activities[i].PID == a.PID && t.Activities[i].Start.Equal(a.Start) {
			t.Activities[i] = a
			return true
		}
	}
	return false
}

// CurrentActivity is the newest activity still running, if any.
func (t *TrialView) CurrentActivity() *model.Activity {
	for i := len(t.Activities) - 1; i >= 0; i-- {
		if t.Activities[i].End.IsZero() {
			return &t.Activities[i]
		}
	}
	return nil
}

// activityLine is a card's line for the running activity under the step:
// `↳ pip install pandas  212M`.
func activityLine(p *paints, a *model.Activity, inner int) string {
	return clip(fmt.Sprintf("  ↳ %s  %s", a.Command, p.muted.Render(mib(a.PeakRSSBytes))), inner)
}

// maxActivityRows is how many activities the trial detail lists.
const maxActivityRows = 4

// activityRows is the trial detail's table of activities: the rows
// largest peaks, with their step, time and whether the kernel killed them.
func activityRows(st themes.Styles, v *TrialView, w, rows int) []string {
	if len(v.Activities) == 0 || rows < 1 {
		return nil
	}
	shown := largestActivities(v.Activities, rows)
	cmdW := min(60, max(16, w-40))
	out := []string{st.Bold.Render(clip(fmt.Sprintf("%-*s %8s %8s %s", cmdW, fmt.Sprintf("processes (%d, largest first)", len(v.Activities)), "time", "peak", "step"), w))}
	end := v.Ended
	if end.IsZero() && len(v.Samples) > 0 {
		end = v.Samples[len(v.Samples)-1].Time
	}
	for _, a := range shown {
		// pad, not %-*s: a command's wide characters take two columns.
		line := fmt.Sprintf("%s %8s %8s %s", pad(a.Command, cmdW), secs(a.Duration(end)), mib(a.PeakRSSBytes), a.Step)
		if a.OOMKilled {
			out = append(out, st.OOM.Render(clip(line+"  killed", w)))
			continue
		}
		out = append(out, clip(line, w))
	}
	return out
}

// largestActivities are the n activities with the highest peaks, largest
// first, as the table's title says (ties in the order they started): they
// were listed in the order they started, under "largest first".
func largestActivities(all []model.Activity, n int) []model.Activity {
	out := slices.Clone(all)
	slices.SortStableFunc(out, func(a, b model.Activity) int { return cmp.Compare(b.PeakRSSBytes, a.PeakRSSBytes) })
	return out[:min(n, len(out))]
}

// killedName names a killed process: its command line where the process
// watch saw it, else the kernel's name for it.
func killedName(o model.OOMEvent) string {
	if o.Command != "" {
		return o.Command
	}
	return o.Process
}
