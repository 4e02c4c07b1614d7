package ui

import (
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
)

type liveModel struct {
	selected int // index into the visible cards
}

// liveGrid is where the live screen puts its cards.
type liveGrid struct {
	// byRatio gives each ratio of the sweep its own column (ratios holds
	// them, in the plan's order) so that 1x, 3x and uncapped keep their
	// places as trials start and end; otherwise cards fill a grid.
	byRatio bool
	ratios  []model.Ratio
	cols    int
	rows    int
	height  int
	// cells are the cards in reading order; nil is an empty slot (a
	// ratio with no trial on screen).
	cells []*TrialView
}

// Card geometry of the ratio columns: each column has two slots (a kill
// lingers while the next repeat starts), as tall as the screen allows,
// up to maxCardHeight; a column is never narrower than ratioColMinWidth.
const (
	ratioSlots       = 2
	maxCardHeight    = 20
	ratioColMinWidth = 26
)

// liveLayout fits cards in the body under the two progress lines. A sweep
// with a few ratios that run side by side (the demo, or a concurrency no
// higher than the number of ratios) gets one column per ratio; any other
// gets as many columns as the width allows, full-height cards when two
// rows fit, compact ones otherwise.
func (m Model) liveLayout(w, h int) liveGrid {
	avail := h - 2
	if m.state != nil {
		ratios := m.state.Plan.Ratios
		nr := len(ratios)
		side := m.spec.Label == "demo" || (m.spec.Concurrency > 0 && m.spec.Concurrency <= nr)
		if nr >= 2 && side && w/nr >= ratioColMinWidth && avail >= ratioSlots*compactCardHeight {
			height := min(avail/ratioSlots, maxCardHeight)
			return liveGrid{byRatio: true, ratios: ratios, cols: nr, rows: ratioSlots, height: height}
		}
	}
	g := liveGrid{cols: max(w/cardMinWidth, 1), height: cardHeight}
	if avail/cardHeight < 2 && avail/compactCardHeight >= 2 {
		g.height = compactCardHeight
	}
	g.rows = max(avail/g.height, 1)
	return g
}

// liveGrid lays the cards out: in a grid, the cards visibleCards picks;
// by ratio, each ratio's own cards in its column, each card in the slot of
// its repeat's parity (so a running card does not move when the card above
// it goes) unless that slot is taken.
func (m Model) liveCards(w, h int) liveGrid {
	g := m.liveLayout(w, h)
	if m.state == nil {
		return g
	}
	now := m.now()
	if !g.byRatio {
		g.cells = visibleCards(m.state, now, g.cols*g.rows)
		return g
	}
	g.cells = make([]*TrialView, g.cols*g.rows)
	for c, r := range g.ratios {
		for _, v := range visibleCards(m.state, now, g.rows, r) {
			slot := (v.Trial.Repeat - 1) % g.rows
			if g.cells[slot*g.cols+c] != nil {
				for s := 0; s < g.rows; s++ {
					if g.cells[s*g.cols+c] == nil {
						slot = s
						break
					}
				}
			}
			if g.cells[slot*g.cols+c] == nil {
				g.cells[slot*g.cols+c] = v
			}
		}
	}
	return g
}

// cards are the grid's cards in reading order, empty slots left out: what
// the cursor moves over.
func (g liveGrid) cards() []*TrialView {
	var out []*TrialView
	for _, v := range g.cells {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

func (m Model) updateLive(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Live
	w, h := m.bodySize()
	g := m.liveCards(w, h)
	cards, cols := g.cards(), g.cols
	sel := min(m.live.selected, max(len(cards)-1, 0))
	switch {
	case key.Matches(msg, k.Left):
		sel = max(sel-1, 0)
	case key.Matches(msg, k.Right):
		sel = min(sel+1, max(len(cards)-1, 0))
	case key.Matches(msg, k.Up):
		sel = max(sel-cols, 0)
	case key.Matches(msg, k.Down):
		sel = min(sel+cols, max(len(cards)-1, 0))
	case key.Matches(msg, k.Open):
		if sel < len(cards) {
			m.openDetail(cards[sel])
		}
	case key.Matches(msg, k.Stop):
		if sel < len(cards) && cards[sel].Phase == Finished {
			m.say(cards[sel].Trial.ID + " has finished: nothing to stop")
		}
		if sel < len(cards) && cards[sel].Phase != Finished {
			id := cards[sel].Trial.ID
			m.confirm = &confirmation{prompt: fmt.Sprintf("Stop trial %s? It will be recorded as cancelled. y/n", id), yes: func(m *Model) tea.Cmd {
				if m.sweep != nil {
					m.sweep.StopTrial(id)
				}
				m.say("stopping " + id)
				m.stopping = id
				return nil
			}}
		}
	case key.Matches(msg, k.CancelSweep):
		if m.Running() {
			m.confirm = &confirmation{prompt: fmt.Sprintf("Cancel the sweep? %d running trial(s) stop, %d queued never start; all are recorded as cancelled. y/n", m.state.Running, m.state.Queued()),
				yes: func(m *Model) tea.Cmd {
					m.sweep.Cancel()
					m.say("cancelling the sweep…")
					m.cancelling = true
					return nil
				}}
		}
	case key.Matches(msg, k.Shell):
		if sel < len(cards) {
			return m, m.openShell(cards[sel])
		}
	}
	m.live.selected = sel
	return m, nil
}

// openShell suspends the console and opens a shell in the trial's
// container; the console comes back when the shell exits.
func (m *Model) openShell(v *TrialView) tea.Cmd {
	if v.Phase != Running || v.ContainerID == "" {
		m.say("shell: the trial is not running")
		return nil
	}
	if m.opts.Shell == nil {
		m.say("shell: not available in this console")
		return nil
	}
	var task model.Task
	for _, t := range m.opts.Tasks {
		if t.Name == v.Trial.Task {
			task = t
		}
	}
	cmd, err := m.opts.Shell(v.ContainerID, task)
	if err != nil {
		m.say("shell: " + err.Error())
		return nil
	}
	return tea.Exec(&bannerCmd{Cmd: cmd, banner: shellBanner(v)}, func(err error) tea.Msg { return shellMsg{err} })
}

// shellBanner tells the user, in the shell, where they are and how to
// come back: the console is gone from the screen while the shell runs.
func shellBanner(v *TrialView) string {
	tr := v.Trial
	limit := "no hard limit"
	if tr.Policy.HardLimitBytes > 0 {
		limit = "its hard limit " + model.FormatBytes(tr.Policy.HardLimitBytes) + " counts this shell too"
	}
	rule := strings.Repeat("─", 72)
	return fmt.Sprintf("%s\nheadroom: a shell in trial %s (%s · %s at %s, repeat %d), container %.12s.\n"+
		"The trial keeps running; %s.\nType exit or press ctrl+d to return to the console.\n%s\n",
		rule, tr.ID, tr.Task, tr.Agent, tr.Ratio, tr.Repeat, v.ContainerID, limit, rule)
}

// bannerCmd runs a command after printing a banner on its output.
type bannerCmd struct {
	*exec.Cmd
	banner string
}

func (c *bannerCmd) SetStdin(r io.Reader)  { c.Stdin = r }
func (c *bannerCmd) SetStdout(w io.Writer) { c.Stdout = w }
func (c *bannerCmd) SetStderr(w io.Writer) { c.Stderr = w }

func (c *bannerCmd) Run() error {
	if c.Stdout != nil {
		io.WriteString(c.Stdout, c.banner)
	}
	return c.Cmd.Run()
}

func (m Model) viewLive(w, h int) string {
	st := m.theme.Styles
	if m.state == nil {
		return st.Muted.Render("No sweep yet: choose tasks and ratios on the setup screen (1) and press enter, or run `headroom demo`.")
	}
	s := m.state
	var out []string
	out = append(out, m.progressLine(w))
	waiting := s.Waiting()
	queue := fmt.Sprintf("running %d · queued %d", s.Running, s.Queued())
	if len(waiting) > 0 {
		queue += fmt.Sprintf(" · held by admission: %s (%s)", waiting[0].Trial.ID, waiting[0].WaitReason)
	}
	out = append(out, st.Muted.Render(clip(queue, w)))
	g := m.liveCards(w, h)
	cards := g.cards()
	if len(cards) == 0 {
		msg := "No trial is running."
		switch {
		case s.Interrupted:
			msg += " The sweep was interrupted; what finished is on the matrix (3)."
		case s.Finished:
			msg += " The sweep is finished: the matrix (3) has the outcomes."
		default:
			msg += " Trials are waiting to start."
		}
		out = append(out, "", st.Muted.Render(msg))
		return fit(strings.Join(out, "\n"), w, h)
	}
	cw := w / g.cols
	sel := cards[min(m.live.selected, len(cards)-1)]
	ctx := cardCtx{st: st, p: newPaints(st), now: m.now(), spinner: m.spinner(), height: g.height, uncappedScale: uncappedScale(cards)}
	var grid []string
	for i := 0; i < len(g.cells); i += g.cols {
		var row []string
		for j := i; j < min(i+g.cols, len(g.cells)); j++ {
			v := g.cells[j]
			if v == nil {
				// A ratio with nothing on screen says so in its first
				// slot; other empty slots stay blank.
				if g.byRatio && j < g.cols && g.cells[j+g.cols] == nil {
					what := "no " + g.ratios[j].String() + " trial running"
					row = append(row, box(st.Box, "", st.Muted.Render(" "+what), cw, g.height))
				} else {
					row = append(row, strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", cw)+"\n", g.height), "\n"))
				}
				continue
			}
			c := ctx
			c.selected = v == sel
			row = append(row, renderCard(c, v, cw))
		}
		grid = append(grid, joinHorizontal(row))
	}
	out = append(out, grid...)
	return fit(strings.Join(out, "\n"), w, h)
}

// uncappedScale is what an uncapped card's gauge is drawn against: the
// largest hard limit among the cards shown (so it reads beside a capped
// card), or more when an uncapped trial has gone past it.
func uncappedScale(cards []*TrialView) int64 {
	var limit, peak int64
	for _, v := range cards {
		limit = max(limit, v.Trial.Policy.HardLimitBytes)
		if v.Trial.Policy.HardLimitBytes == 0 {
			peak = max(peak, v.Peak, v.Trial.Policy.GuaranteeBytes)
		}
	}
	if peak > limit {
		// Round up to a whole 64 MiB so the scale does not creep.
		const step = 64 << 20
		return (peak*5/4 + step - 1) / step * step
	}
	return limit
}

// spinner is the running step's mark; fixed when the console is static.
func (m Model) spinner() string {
	if m.opts.Static {
		return "›"
	}
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	return frames[m.frame%len(frames)]
}

// progressLine: a bar, counts per outcome so far, elapsed and ETA.
func (m Model) progressLine(w int) string {
	st := m.theme.Styles
	s := m.state
	total := max(len(s.Order), 1)
	barW := min(30, max(w/4, 10))
	filled := s.Done * barW / total
	bar := st.OK.Render(strings.Repeat("█", filled)) + st.GaugeFree.Render(strings.Repeat("░", barW-filled))
	var counts []string
	for _, o := range model.Outcomes {
		if n := s.Counts[o]; n > 0 {
			counts = append(counts, st.Outcome(o).Render(fmt.Sprintf("%s %d", o, n)))
		}
	}
	line := fmt.Sprintf("%s %d/%d  %s", bar, s.Done, len(s.Order), strings.Join(counts, " "))
	if !m.opts.Static && !s.Finished {
		line += st.Muted.Render(fmt.Sprintf("  elapsed %s", secs(m.now().Sub(s.Started))))
		if eta := s.ETA(m.now(), m.spec.Concurrency); eta > 0 {
			line += st.Muted.Render(fmt.Sprintf("  eta %s", secs(eta)))
		}
	}
	return clip(line, w)
}

// joinHorizontal puts equal-height blocks side by side.
func joinHorizontal(blocks []string) string {
	split := make([][]string, len(blocks))
	height := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		height = max(height, len(split[i]))
	}
	var out []string
	for l := 0; l < height; l++ {
		var line strings.Builder
		for _, b := range split {
			if l < len(b) {
				line.WriteString(b[l])
			}
		}
		out = append(out, line.String())
	}
	return strings.Join(out, "\n")
}
