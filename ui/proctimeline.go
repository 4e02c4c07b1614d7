package ui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// The process timeline's glyphs: they carry the meaning on their own, so
// it reads the same under NO_COLOR.
const (
	spanGlyph = "━"
	killGlyph = "✗"
	idleGlyph = "·"
)

// maxTimelineRows is how many activities the process timeline draws.
const maxTimelineRows = 6

// processRows splits the rows the detail can spare (room, headers
// included) between the process timeline and the activity table, for n
// activities: both whole when they fit, else the timeline first (its rows
// carry command, span, kill and peak) and the table what is left.
func processRows(n, room int) (timeline, table int) {
	if n == 0 || room < 2 {
		return 0, 0
	}
	timeline, table = min(n, maxTimelineRows), min(n, maxActivityRows)
	if 2+timeline+table <= room {
		return timeline, table
	}
	timeline = min(timeline, room-1)
	return timeline, max(room-timeline-2, 0)
}

// trialSpan is the time axis of a trial: the memory chart's above it
// (its first sample to its last, at least a second, as timeline draws
// it) where there is one, so a process's bar sits under its memory: the
// timeline ran from the trial's queueing to its removal (5.2 s under a
// chart of 3.9 s, a new user's try). Without samples, from its start to
// its end (or the newest thing seen while it runs).
func trialSpan(v *TrialView) (start, end time.Time) {
	if len(v.Samples) >= 2 {
		start = v.Samples[0].Time
		return start, start.Add(max(v.Samples[len(v.Samples)-1].Time.Sub(start), time.Second))
	}
	start, end = v.Started, v.Ended
	if v.Result != nil && !v.Result.Start.IsZero() {
		start, end = v.Result.Start, v.Result.End
	}
	if start.IsZero() && len(v.Samples) > 0 {
		start = v.Samples[0].Time
	}
	if end.IsZero() {
		if len(v.Samples) > 0 {
			end = v.Samples[len(v.Samples)-1].Time
		}
		for _, a := range v.Activities {
			end = latest(end, a.Start, a.End)
		}
	}
	for _, a := range v.Activities {
		if start.IsZero() || a.Start.Before(start) {
			start = a.Start
		}
	}
	return start, end
}

func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// timelineCol is the column of moment t on an axis of cols columns from
// start over span.
func timelineCol(t, start time.Time, span time.Duration, cols int) int {
	if span <= 0 || cols < 1 {
		return 0
	}
	c := int(int64(t.Sub(start)) * int64(cols) / int64(span))
	return min(max(c, 0), cols-1)
}

// timelineOrder is the activities the timeline draws: the largest peaks
// first, the longest first among equal peaks.
func timelineOrder(all []model.Activity, end time.Time, n int) []model.Activity {
	out := slices.Clone(all)
	slices.SortStableFunc(out, func(a, b model.Activity) int {
		if c := cmp.Compare(b.PeakRSSBytes, a.PeakRSSBytes); c != 0 {
			return c
		}
		return cmp.Compare(b.Duration(end), a.Duration(end))
	})
	return out[:min(n, len(out))]
}

// processTimeline draws the trial's activities as bars on one time axis
// (the trial's duration), one row each with its command and peak RSS,
// the moment the kernel killed one marked; rows caps how many are drawn.
// It is w columns wide, like the memory chart above it.
func processTimeline(st themes.Styles, v *TrialView, w, rows int) []string {
	if len(v.Activities) == 0 || rows < 1 {
		return nil
	}
	start, end := trialSpan(v)
	span := max(end.Sub(start), time.Millisecond)
	cmdW := min(40, max(12, w/3))
	const peakW = 5
	barW := max(w-cmdW-peakW-2, 8)
	shown := timelineOrder(v.Activities, end, rows)
	title := fmt.Sprintf("process timeline (%d, largest first)", len(v.Activities))
	if more := len(v.Activities) - len(shown); more > 0 {
		title = fmt.Sprintf("process timeline +%d more", more)
	}
	total := secs(span)
	zero := secs(0)
	axis := zero + strings.Repeat(" ", max(barW-width(zero)-width(total), 1)) + total
	out := []string{st.Bold.Render(pad(title, cmdW)) + " " + st.Muted.Render(axis)}
	for _, a := range shown {
		out = append(out, pad(a.Command, cmdW)+" "+timelineBar(st, a, start, end, span, barW)+" "+padLeft(mib(a.PeakRSSBytes), peakW))
	}
	for i := range out {
		out[i] = clip(out[i], w)
	}
	return out
}

// timelineBar is one activity's bar: idle, then its span, ending in a
// kill mark where the kernel killed it; a running one reaches the end.
func timelineBar(st themes.Styles, a model.Activity, start, end time.Time, span time.Duration, cols int) string {
	stop := a.End
	if stop.IsZero() {
		stop = end
	}
	from, to := timelineCol(a.Start, start, span, cols), timelineCol(stop, start, span, cols)
	to = max(to, from)
	var b strings.Builder
	b.WriteString(st.Muted.Render(strings.Repeat(idleGlyph, from)))
	if a.OOMKilled {
		b.WriteString(strings.Repeat(spanGlyph, to-from))
		b.WriteString(st.OOM.Render(killGlyph))
	} else {
		b.WriteString(strings.Repeat(spanGlyph, to-from+1))
	}
	b.WriteString(st.Muted.Render(strings.Repeat(idleGlyph, cols-to-1)))
	return b.String()
}
