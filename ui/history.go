package ui

import (
	"fmt"
	"path"
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
	var out []string
	for _, l := range wrapWords("enter opens an experiment read-only · r resumes an interrupted one (reruns its missing trials with the same seeds)", w, "") {
		out = append(out, st.Muted.Render(l))
	}
	// The experiment id holds its start time; the created column is only
	// drawn where there is room beside what was run.
	created := w >= 110
	head := fmt.Sprintf("%-20s %-11s %6s  %s", "experiment", "status", "trials", "what was run")
	if created {
		head = fmt.Sprintf("%-20s %-11s %6s  %-16s  %s", "experiment", "status", "trials", "created", "what was run")
	}
	out = append(out, st.Bold.Render(clip(noMark+head, w)))
	first, last := hm.cursor.window(len(hm.list), h-len(out)-1)
	for i := first; i < last; i++ {
		e := hm.list[i]
		line := fmt.Sprintf("%-20s %-11s %6d  %s", e.ID, e.Status, e.Trials, whatWasRun(e))
		if created {
			line = fmt.Sprintf("%-20s %-11s %6d  %-16s  %s", e.ID, e.Status, e.Trials, e.Created, whatWasRun(e))
		}
		out = append(out, cursorRow(st, line, w, i == hm.cursor.at(len(hm.list))))
	}
	if hm.loading {
		out = append(out, st.Muted.Render("loading…"))
	}
	return fit(strings.Join(out, "\n"), w, h)
}

// whatWasRun says what an experiment ran, shortest parts first so that a
// narrow screen cuts task names, not the ratios: "1x 3x uncapped ×3 ·
// bn-fit-modify +3 more".
func whatWasRun(e Experiment) string {
	var names []string
	seen := map[string]bool{}
	for _, t := range e.Tasks {
		n := path.Base(t)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	var ratios []string
	for _, r := range e.Ratios {
		ratios = append(ratios, r.String())
	}
	what := strings.Join(ratios, " ")
	if e.Repeats > 0 {
		what += fmt.Sprintf(" ×%d", e.Repeats)
	}
	switch {
	case len(names) == 1:
		what += " · " + names[0]
	case len(names) > 1:
		what += fmt.Sprintf(" · %s +%d more", names[0], len(names)-1)
	}
	return strings.TrimPrefix(what, " · ")
}
