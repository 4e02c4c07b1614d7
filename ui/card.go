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
	// tasks: the sweep has more than one task, so every title names its
	// trial's task.
	tasks bool
}

// renderCard draws one trial as a w×cardHeight block.
func renderCard(c cardCtx, v *TrialView, w int) string {
	st, p := c.st, c.p
	if p == nil {
		p = newPaints(st)
	}
	tr := v.Trial
	inner := w - 2
	title := cardTitle(tr, inner-6, c.tasks) // room for the selection's marker
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
	// The peak as an audience reads it: the kernel's where it read
	// higher than the samples, saying so (the detail view's PeakText says
	// which figure it is in every case).
	peak := cardPeak(v.Peak, v.KernelPeak())
	// The chart ends at the clock while the trial runs, at its end once
	// it has finished, and at the kill on a killed card: the gauge, the
	// peak and the chart hold the kill's picture for the whole linger.
	end := c.now
	killedAt := v.KilledAt()
	switch {
	case !killedAt.IsZero():
		// The samples until the kill, and the kernel's figures: its
		// reading at the kill (the banner's) and, once they arrive, the
		// steps' and the record's high-water marks. A card at 1x read
		// peak 56M under a banner "at 64M / 64M".
		var p int64
		ws, cache, p = v.atKill(killedAt)
		kernel := v.KernelPeak()
		if n := len(v.OOMs); n > 0 {
			if b, ok := v.OOMs[n-1].KilledAt(); ok {
				kernel = max(kernel, b)
			}
		}
		peak, end = cardPeak(p, kernel), killedAt
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
	// Words an audience reads (used, limit, guarantee): each part whole
	// or not at all.
	mem := []string{fmt.Sprintf("%s of %s limit", mib(ws), limitS), "guarantee " + mib(tr.Policy.GuaranteeBytes)}
	if limit == 0 {
		// Say what the bar is drawn against: there is no limit to fill.
		mem = []string{fmt.Sprintf("%s, no limit", mib(ws)), "bar to " + mib(scale), "guarantee " + mib(tr.Policy.GuaranteeBytes)}
	}
	if v.Phase == Running && killedAt.IsZero() {
		mem = append(mem, fmt.Sprintf("cpu %.2f", v.Last.CPUCores)+throttleText(v.Samples))
	}
	memLine := wholeParts(mem, " · ", inner)
	// What the kernel killed: in the banner where the card has room for
	// it (the whole command, wrapped), else instead of the memory line.
	// Its pid and resident set are the detail view's.
	var killedWhat string
	kills := v.TaskKills()
	if len(kills) > 0 && killedName(kills[len(kills)-1]) != "" {
		killedWhat = "killed " + killedName(kills[len(kills)-1])
	}
	roomy := c.height > cardHeight
	if killedWhat != "" && !roomy {
		memLine = clip(killedWhat, inner)
	}
	lines = append(lines, p.text.Render(memLine), p.text.Render(clip("peak "+peak, inner)))
	// The memory chart: one row on a standard card, the rows a taller
	// card has to spare.
	chartRows := max(c.height-cardHeight, 1)
	if v.Killed() {
		banner := fmt.Sprintf(" OOM KILLED at peak %s / %s ", mib(v.NeedBytes()), limitS)
		if v.Result != nil && v.Result.KilledInStep != "" {
			banner = fmt.Sprintf(" OOM KILLED in %s at %s / %s ", v.Result.KilledInStep, mib(v.NeedBytes()), limitS)
		}
		if len(kills) > 0 {
			o := kills[len(kills)-1]
			at, _ := o.KilledAt()
			banner = fmt.Sprintf(" OOM KILLED in %s at %s / %s ", o.Step, mib(at), limitS)
		}
		if len(kills) > 1 {
			o := kills[len(kills)-1]
			at, _ := o.KilledAt()
			banner = fmt.Sprintf(" %d OOM KILLS, last in %s at %s / %s ", len(kills), o.Step, mib(at), limitS)
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
		samples := v.Samples
		if !killedAt.IsZero() {
			samples = v.KillSamples() // the kill's picture, whatever arrives late
		}
		lines = append(lines, spark(p, samples, end, window, scale, inner, chartRows)...)
	}
	switch v.Phase {
	case Creating:
		lines = append(lines, st.Muted.Render("creating container…"))
	case Running:
		switch {
		case !killedAt.IsZero():
			// Frozen at the kill like the rest of the card: what runs
			// after it, without a spinner or a clock.
			what := "after the kill: finishing"
			if v.Step != nil {
				what = "after the kill: " + v.Step.Step.Name + " " + v.Step.Step.Show
			}
			lines = append(lines, p.muted.Render(clip(what, inner)))
		case v.Step != nil:
			el := secs(c.now.Sub(v.StepAt))
			lines = append(lines, clip(fmt.Sprintf("%s %s %s  %s", c.spinner, p.bold.Render(v.Step.Step.Name), v.Step.Step.Show, p.muted.Render(el)), inner))
			if a := v.CurrentActivity(); a != nil && a.Command != v.Step.Step.Show {
				lines = append(lines, activityLine(p, a, inner))
			}
		case len(v.Steps) > 0:
			lines = append(lines, st.Muted.Render(clip("finishing…", inner)))
		default:
			lines = append(lines, st.Muted.Render("starting…"))
		}
		tail := v.Tail
		keep := min(3-(cardHeight-c.height), tailLines)
		if !killedAt.IsZero() {
			keep = 0
		}
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
		// The reason wrapped under the verdict at words, never cut
		// mid-phrase at the card's edge.
		lines = append(lines, resultStyle(st, r.Outcome, r.Cause).Render(clip(head, inner)))
		for _, l := range wrapWords(r.Reason, inner, "") {
			lines = append(lines, st.Muted.Render(l))
		}
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

// cardTitle names a card's trial in words (ratio, agent, repeat; the
// task where it fits whole): its id is the detail view's. withTask (a
// sweep of several tasks) names the task whatever the width, the rest
// shortened first and the task's name cut last: "3x · agent · repeat 1"
// on a sweep of five tasks did not say which task a kill was.
func cardTitle(tr model.Trial, w int, withTask bool) string {
	title := fmt.Sprintf("%s · %s · repeat %d", tr.Ratio, tr.Agent, tr.Repeat)
	task := path.Base(tr.Task)
	if withTask {
		short := fmt.Sprintf("%s · #%d · ", tr.Ratio, tr.Repeat)
		for _, t := range []string{title + " · " + task, fmt.Sprintf("%s · %s · #%d · %s", tr.Ratio, tr.Agent, tr.Repeat, task), short + task} {
			if width(t) <= w {
				return t
			}
		}
		return clip(short+task, w)
	}
	for _, t := range []string{title + " · " + task, title, fmt.Sprintf("%s · %s · #%d", tr.Ratio, tr.Agent, tr.Repeat)} {
		if width(t) <= w {
			return t
		}
	}
	return fmt.Sprintf("%s · #%d", tr.Ratio, tr.Repeat)
}

// cardPeak is a card's peak: the figure alone, or the kernel's with the
// sampled one beside it where the kernel's is higher (model.PeakLabel),
// never "(sampled)": a card's peak is sampled until the kernel's is read.
func cardPeak(sampled, kernel int64) string {
	if kernel > sampled {
		return model.PeakLabel(sampled, kernel, mib)
	}
	return mib(max(sampled, kernel))
}

// wholeParts joins the parts that fit whole in w, in order of
// importance (the first always, clipped if it must be).
func wholeParts(parts []string, sep string, w int) string {
	line := clip(parts[0], w)
	for _, p := range parts[1:] {
		if width(line+sep+p) <= w {
			line += sep + p
		}
	}
	return line
}

// nextLine is the corner of a cell whose card is not its running trial (a
// kill lingers): the next trial, where it is, right-aligned.
func nextLine(st themes.Styles, p *paints, spinner string, next []*TrialView, selected bool, w int) string {
	n := next[0]
	what := "creating container…"
	switch {
	case n.Phase == Running && n.Step != nil:
		what = fmt.Sprintf("%s %s", n.Step.Step.Name, mib(n.Last.WorkingSetBytes)) // uncapped, as its cell says
		if l := n.Trial.Policy.HardLimitBytes; l > 0 {
			what = fmt.Sprintf("%s %s of %s", n.Step.Step.Name, mib(n.Last.WorkingSetBytes), mib(l))
		}
	case n.Phase == Running:
		what = "starting…"
	}
	if n.Killed() {
		what = "OOM killed"
		if o := n.OOMs; len(o) > 0 {
			what += " in " + o[len(o)-1].Step
		}
	}
	line := fmt.Sprintf("next %s %s · repeat %d · %s", spinner, n.Trial.Agent, n.Trial.Repeat, what)
	if len(next) > 1 {
		line += fmt.Sprintf(" (+%d)", len(next)-1)
	}
	if selected {
		// The marker as well as the colour, as a selected card's title.
		return st.Selected.Render(padLeft(clip("▸ "+line, w), w))
	}
	return p.muted.Render(padLeft(clip(line, w), w))
}

// stepsLine lists finished steps compactly: ✓ name duration peak, whole
// steps only (a step cut at the card's edge, "✗ verify 0.7s 3.…", read
// as a number cut), " …" where the later ones are left out.
func stepsLine(p *paints, steps []model.StepResult, w int) string {
	var parts []string
	for _, s := range steps {
		if len(parts) > w/4 {
			break // a traced script has many steps: only what can fit is drawn
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
		parts = append(parts, fmt.Sprintf("%s %s %s %s", mark, s.Name, secs(s.Duration()), stepMiB(s, model.StepPeakBytes(s))))
	}
	line := strings.Join(parts, "  ")
	for n := len(parts) - 1; width(line) > w && n > 0; n-- {
		line = strings.Join(parts[:n], "  ") + p.muted.Render(" …")
	}
	return clip(line, w)
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
