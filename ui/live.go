package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
)

type liveModel struct {
	selected int // index into the visible cards
}

// liveLayout fits cards in the body under the two progress lines: as many
// columns as the width allows, full-height cards when two rows fit,
// compact ones otherwise.
func (m Model) liveLayout(w, h int) (cols, rows, height int) {
	cols = max(w/cardMinWidth, 1)
	avail := h - 2
	height = cardHeight
	if avail/cardHeight < 2 && avail/compactCardHeight >= 2 {
		height = compactCardHeight
	}
	rows = max(avail/height, 1)
	return cols, rows, height
}

func (m Model) liveCards(w, h int) []*TrialView {
	if m.state == nil {
		return nil
	}
	cols, rows, _ := m.liveLayout(w, h)
	return visibleCards(m.state, m.now(), cols*rows)
}

func (m Model) updateLive(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Live
	w, h := m.bodySize()
	cards := m.liveCards(w, h)
	cols, _, _ := m.liveLayout(w, h)
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
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return shellMsg{err} })
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
	cards := m.liveCards(w, h)
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
	cols, _, height := m.liveLayout(w, h)
	cw := w / cols
	sel := min(m.live.selected, len(cards)-1)
	ctx := cardCtx{st: st, p: newPaints(st), now: m.now(), hostBytes: m.host.MemTotal, spinner: m.spinner(), height: height}
	var grid []string
	for i := 0; i < len(cards); i += cols {
		var row []string
		for j := i; j < min(i+cols, len(cards)); j++ {
			c := ctx
			c.selected = j == sel
			row = append(row, renderCard(c, cards[j], cw))
		}
		grid = append(grid, joinHorizontal(row))
	}
	out = append(out, grid...)
	return fit(strings.Join(out, "\n"), w, h)
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
