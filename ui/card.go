package ui

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// Card geometry.
const (
	cardMinWidth = 38
	cardHeight   = 10
	// A compact card drops two lines of output so two rows fit in 24 lines.
	compactCardHeight = 8
	// How long a finished card stays on screen; a kill stays longer so the
	// banner can be read.
	cardLinger    = 4 * time.Second
	oomCardLinger = 10 * time.Second
	// killedBannerLines are the lines under a tall card's kill banner for
	// the killed command.
	killedBannerLines = 2
	// chartMinWindow is the shortest span a card's memory chart shows.
	chartMinWindow = 10 * time.Second
)

// cardCtx is what a card needs besides its trial.
type cardCtx struct {
	st       themes.Styles
	p        *paints
	now      time.Time
	spinner  string
	selected bool
	height   int
	// uncappedScale is what an uncapped card's gauge and chart are drawn
	// against (the largest limit on screen); 0: the trial's own peak.
	uncappedScale int64
	// next are the trials of the card's cell that wait in its corner.
	next []*TrialView
	// nextSelected: the cursor is on the corner's trial.
	nextSelected bool
}

// renderCard draws one trial as a w×cardHeight block.
func renderCard(c cardCtx, v *TrialView, w int) string {
	st, p := c.st, c.p
	if p == nil {
		p = newPaints(st)
	}
	tr := v.Trial
	inner := w - 2
	title := fmt.Sprintf("%s %s r%d %s·%s", tr.ID, tr.Ratio, tr.Repeat, path.Base(tr.Task), tr.Agent)
	style := st.Box
	if c.selected {
		// The marker as well as the colour: NO_COLOR keeps only glyphs.
		style, title = st.FocusBox, "▸ "+title
	}
	if v.Killed() {
		style = st.OOMBox
	}
	var lines []string
	limit := tr.Policy.HardLimitBytes
	scale := limit
	if scale == 0 {
		scale = max(c.uncappedScale, v.Peak, tr.Policy.GuaranteeBytes)
	}
	ws, cache := v.Last.WorkingSetBytes, v.Last.CacheBytes
	peak := v.PeakText()
	// The chart ends at the clock while the trial runs, at its end once
	// it has finished, and at the kill on a killed card: the gauge, the
	// peak and the chart hold the kill's picture for the whole linger.
	end := c.now
	killedAt := v.KilledAt()
	switch {
	case !killedAt.IsZero():
		var p int64
		ws, cache, p = v.atKill(killedAt)
		peak, end = model.PeakLabel(p, 0, mib), killedAt
	case v.Phase == Finished:
		// Frozen as it ended: the gauge keeps the last reading.
		if !v.Ended.IsZero() {
			end = v.Ended
		}
	}
	lines = append(lines, gauge(p, ws, cache, tr.Policy.GuaranteeBytes, limit, scale, inner))
	limitS := "none"
	if limit > 0 {
		limitS = mib(limit)
	}
	memLine := fmt.Sprintf("%s / %s  g %s", mib(ws), limitS, mib(tr.Policy.GuaranteeBytes))
	if limit == 0 {
		// Say what the bar is drawn against: there is no limit to fill.
		memLine = fmt.Sprintf("%s / none  bar = %s", mib(ws), mib(scale))
	}
	if v.Phase == Running && killedAt.IsZero() {
		memLine += fmt.Sprintf("  cpu %.2f", v.Last.CPUCores) + throttleText(v.Samples)
	}
	// What the kernel killed: in the banner where the card has room for
	// it (the whole command, wrapped), else instead of the memory line.
	var killedWhat, killedPID string
	if len(v.OOMs) > 0 && killedName(v.OOMs[len(v.OOMs)-1]) != "" {
		o := v.OOMs[len(v.OOMs)-1]
		killedWhat = "killed " + killedName(o)
		if o.PID != 0 {
			killedPID = fmt.Sprintf(" · pid %d, rss %s", o.PID, mib(o.RSSBytes))
		}
	}
	roomy := c.height > cardHeight
	if killedWhat != "" && !roomy {
		memLine = killedWhat + killedPID
	}
	// The peak on a line of its own, saying which peak it is (sampled, or
	// the kernel's beside the sampled one): the report's is the kernel's.
	lines = append(lines, p.text.Render(clip(memLine, inner)), p.text.Render(clip("peak "+peak, inner)))
	// The memory chart: one row on a standard card, the rows a taller
	// card has to spare.
	chartRows := max(c.height-cardHeight, 1)
	if v.Killed() {
		banner := fmt.Sprintf(" OOM KILLED at peak %s / %s ", mib(v.NeedBytes()), limitS)
		if v.Result != nil && v.Result.KilledInStep != "" {
			banner = fmt.Sprintf(" OOM KILLED in %s at %s / %s ", v.Result.KilledInStep, mib(v.NeedBytes()), limitS)
		}
		if len(v.OOMs) > 0 {
			o := v.OOMs[len(v.OOMs)-1]
			banner = fmt.Sprintf(" OOM KILLED in %s at %s / %s ", o.Step, mib(o.WorkingSetBytes), limitS)
		}
		if len(v.OOMs) > 1 {
			o := v.OOMs[len(v.OOMs)-1]
			banner = fmt.Sprintf(" %d OOM KILLS, last in %s at %s / %s ", len(v.OOMs), o.Step, mib(o.WorkingSetBytes), limitS)
		}
		if v.Result != nil && v.Result.Cause == model.CauseOutsidePressure {
			banner = fmt.Sprintf(" %s in %s at peak %s / %s ", v.Result.Cause.Banner(""), v.Result.KilledInStep, mib(v.NeedBytes()), limitS)
		}
		lines = append(lines, st.OOMBanner.Render(clip(banner, inner)))
		chartRows--
		if roomy {
			// Two lines kept for the killed command whether or not the
			// kernel has named it yet, so the chart under them never moves.
			what := wrapWords(killedWhat, inner-2, "")
			// The pid and rss only where they fit whole.
			if n := len(what); n > 0 && width(what[n-1]+killedPID) <= inner-2 {
				what[n-1] += killedPID
			} else if n < killedBannerLines && killedPID != "" {
				what = append(what, strings.TrimPrefix(killedPID, " · "))
			}
			for i := range killedBannerLines {
				if i < len(what) {
					lines = append(lines, st.OOMBanner.Render(pad(" "+what[i]+" ", min(width(what[i])+2, inner))))
				} else {
					lines = append(lines, "")
				}
			}
			chartRows -= killedBannerLines
		}
	}
	if chartRows > 0 {
		// The chart spans the trial so far (at least chartMinWindow, at
		// most a minute): a climb of a few seconds fills the chart rather
		// than a sliver at its right edge.
		window := time.Minute
		if !v.Started.IsZero() {
			window = min(max(end.Sub(v.Started), chartMinWindow), time.Minute)
		}
		lines = append(lines, spark(p, v.Samples, end, window, scale, inner, chartRows)...)
	}
	switch v.Phase {
	case Creating:
		lines = append(lines, st.Muted.Render("creating container…"))
	case Running:
		if v.Step != nil {
			el := secs(c.now.Sub(v.StepAt))
			lines = append(lines, clip(fmt.Sprintf("%s %s %s  %s", c.spinner, p.bold.Render(v.Step.Step.Name), v.Step.Step.Show, p.muted.Render(el)), inner))
			if a := v.CurrentActivity(); a != nil && a.Command != v.Step.Step.Show {
				lines = append(lines, activityLine(p, a, inner))
			}
		} else if len(v.Steps) > 0 {
			lines = append(lines, st.Muted.Render("finishing: reading the engine's verdict, removing the container…"))
		} else {
			lines = append(lines, st.Muted.Render("starting…"))
		}
		tail := v.Tail
		keep := min(3-(cardHeight-c.height), tailLines)
		if len(tail) > keep {
			tail = tail[len(tail)-max(keep, 0):]
		}
		for _, l := range tail {
			lines = append(lines, p.muted.Render(clip("  "+l, inner)))
		}
	case Finished:
		r := v.Result
		head := strings.ToUpper(string(r.Outcome))
		// A pass is said as a pass, whatever happened on the way (its
		// reason says it): the harness's verdict first.
		if b := r.Cause.Banner(""); b != "" && !r.Outcome.Success() {
			head = model.TrialGlyph(r.Outcome, r.Cause) + " " + b
		}
		lines = append(lines, clip(resultStyle(st, r.Outcome, r.Cause).Render(head)+"  "+st.Muted.Render(r.Reason), inner))
	default:
		lines = append(lines, st.Muted.Render(clip(v.WaitReason, inner)))
	}
	body := c.height - 3
	if len(c.next) > 0 {
		body--
	}
	lines = lines[:min(len(lines), body)]
	for len(lines) < body {
		lines = append(lines, "")
	}
	if len(c.next) > 0 {
		lines = append(lines, nextLine(st, p, c.spinner, c.next, c.nextSelected, inner))
	}
	lines = append(lines, stepsLine(p, v.Steps, inner))
	return box(style, title, strings.Join(lines, "\n"), w, c.height)
}

// nextLine is the corner of a cell whose card is not its running trial (a
// kill lingers): the next trial, where it is, right-aligned.
func nextLine(st themes.Styles, p *paints, spinner string, next []*TrialView, selected bool, w int) string {
	n := next[0]
	what := "creating container…"
	switch {
	case n.Phase == Running && n.Step != nil:
		limit := "none"
		if l := n.Trial.Policy.HardLimitBytes; l > 0 {
			limit = mib(l)
		}
		what = fmt.Sprintf("%s %s / %s", n.Step.Step.Name, mib(n.Last.WorkingSetBytes), limit)
	case n.Phase == Running:
		what = "starting…"
	}
	if n.Killed() {
		what = "OOM killed"
		if o := n.OOMs; len(o) > 0 {
			what += " in " + o[len(o)-1].Step
		}
	}
	line := fmt.Sprintf("next %s %s r%d · %s", spinner, n.Trial.ID, n.Trial.Repeat, what)
	if len(next) > 1 {
		line += fmt.Sprintf(" (+%d)", len(next)-1)
	}
	if selected {
		// The marker as well as the colour, as a selected card's title.
		return st.Selected.Render(padLeft(clip("▸ "+line, w), w))
	}
	return p.muted.Render(padLeft(clip(line, w), w))
}

// stepsLine lists finished steps compactly: ✓ name duration peak.
func stepsLine(p *paints, steps []model.StepResult, w int) string {
	var parts []string
	used := 0
	for _, s := range steps {
		if used > w {
			break // a traced script has many steps: only what fits is drawn
		}
		mark := p.ok.Render("✓")
		switch {
		case s.OOMKills > 0:
			mark = p.oom.Render("K")
		case s.Failed():
			mark = p.danger.Render("✗")
		case s.ExitUnknown != "":
			mark = p.muted.Render("?")
		}
		part := fmt.Sprintf("%s %s %s %s", mark, s.Name, secs(s.Duration()), mib(s.PeakWorkingSetBytes))
		used += width(part) + 2
		parts = append(parts, part)
	}
	return clip(strings.Join(parts, "  "), w)
}

// visibleCards picks the cards for the live screen: running trials and
// recently finished ones (kills linger longest). When there are more than
// fit, fresh kills win, then running trials; they are shown in plan order
// so a card does not jump around.
func visibleCards(s *SweepState, now time.Time, limit int, only ...model.Ratio) []*TrialView {
	var kills, running, recent []*TrialView
	for _, id := range s.Order {
		v := s.Trials[id]
		if len(only) > 0 && v.Trial.Ratio != only[0] {
			continue
		}
		switch v.Phase {
		case Creating, Running:
			if v.Killed() {
				kills = append(kills, v)
			} else {
				running = append(running, v)
			}
		case Finished:
			if v.Killed() && now.Sub(v.Ended) < oomCardLinger {
				kills = append(kills, v)
			} else if now.Sub(v.Ended) < cardLinger {
				recent = append(recent, v)
			}
		}
	}
	picked := map[string]bool{}
	for _, group := range [][]*TrialView{kills, running, recent} {
		for _, v := range group {
			if len(picked) < limit {
				picked[v.Trial.ID] = true
			}
		}
	}
	var out []*TrialView
	for _, id := range s.Order {
		if picked[id] {
			out = append(out, s.Trials[id])
		}
	}
	return out
}
