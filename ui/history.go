package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// The history screen opens past experiments read-only.
type historyModel struct {
	list    []Experiment
	err     error
	cursor  listCursor
	loaded  *Experiment
	loading bool
}

func (m *Model) listHistory() tea.Cmd {
	f := m.opts.History
	if f == nil {
		return nil
	}
	return func() tea.Msg {
		list, err := f()
		return historyMsg{list: list, err: err}
	}
}

func (m Model) updateHistory(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case historyMsg:
		m.history.list, m.history.err = msg.list, msg.err
		m.history.cursor.clamp(len(msg.list))
	case loadedMsg:
		m.history.loading = false
		if msg.err != nil {
			m.say(fmt.Sprintf("open %s: %v", msg.exp.ID, msg.err))
			return m, nil
		}
		exp := msg.exp
		m.history.loaded = &exp
		m.state = FromResults(msg.plan, msg.results)
		m.sweep = nil
		m.spec = LaunchSpec{}
		m.matrix = matrixModel{}
		m.screen = MatrixScreen
		m.say("opened " + exp.ID + " (read-only)")
	}
	return m, nil
}

func (m Model) updateHistoryKeys(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.History
	h := &m.history
	cur := h.cursor.at(len(h.list))
	switch {
	case h.cursor.update(msg, k.List, len(h.list), 10):
	case key.Matches(msg, k.Resume):
		if m.Running() {
			m.say("a sweep is running: resume when it ends")
			return m, nil
		}
		r, ok := m.opts.Launcher.(Resumer)
		if !ok || cur >= len(h.list) {
			m.say("resume is not available in this console")
			return m, nil
		}
		exp := h.list[cur]
		return m, func() tea.Msg {
			sw, err := r.Resume(exp)
			return launchedMsg{sweep: sw, spec: LaunchSpec{Label: "resume " + exp.ID}, err: err}
		}
	case key.Matches(msg, k.Open):
		if m.Running() {
			m.say("a sweep is running: open history when it ends")
			return m, nil
		}
		if cur < len(h.list) {
			exp := h.list[cur]
			h.loading = true
			return m, func() tea.Msg {
				plan, results, err := exp.Load()
				return loadedMsg{exp: exp, plan: plan, results: results, err: err}
			}
		}
	}
	return m, nil
}

func (m Model) viewHistory(w, h int) string {
	st := m.theme.Styles
	hm := m.history
	if m.opts.History == nil {
		return st.Muted.Render("History is not available in this console.")
	}
	if hm.err != nil {
		return st.Danger.Render("Cannot list experiments: " + hm.err.Error())
	}
	if len(hm.list) == 0 {
		return st.Muted.Render("No past experiments in the store yet: every sweep you run is kept here.")
	}
	out := []string{st.Muted.Render(clip("enter opens an experiment read-only · r resumes an interrupted one (reruns its missing trials with the same seeds)", w)),
		st.Bold.Render(clip(noMark+fmt.Sprintf("%-24s %-12s %7s  %s", "experiment", "status", "trials", "created"), w))}
	first, last := hm.cursor.window(len(hm.list), h-len(out)-1)
	for i := first; i < last; i++ {
		e := hm.list[i]
		line := fmt.Sprintf("%-24s %-12s %7d  %s", e.ID, e.Status, e.Trials, e.Created)
		out = append(out, cursorRow(st, line, w, i == hm.cursor.at(len(hm.list))))
	}
	if hm.loading {
		out = append(out, st.Muted.Render("loading…"))
	}
	return fit(strings.Join(out, "\n"), w, h)
}
