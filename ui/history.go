package ui

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
)

// historyScreen lists past experiments; enter opens one read-only, r
// resumes an interrupted one.
type historyScreen struct {
	keys    HistoryKeys
	w, h    int
	list    []Experiment
	err     error
	cursor  listCursor
	loading bool
}

func newHistory(k HistoryKeys) historyScreen { return historyScreen{keys: k} }

func (s *historyScreen) ShortHelp() []key.Binding  { return s.keys.ShortHelp() }
func (s *historyScreen) FullHelp() [][]key.Binding { return s.keys.FullHelp() }
func (s *historyScreen) SetSize(w, h int)          { s.w, s.h = w, h }

// list asks for the experiments in the store (a historyMsg comes back).
func listHistory(f func() ([]Experiment, error)) tea.Cmd {
	if f == nil {
		return nil
	}
	return func() tea.Msg {
		list, err := f()
		return historyMsg{list: list, err: err}
	}
}

// listed takes the store's answer.
func (s *historyScreen) listed(msg historyMsg) {
	s.list, s.err = printable.Value(msg.list), msg.err
	s.cursor.clamp(len(msg.list))
}

func (s *historyScreen) Update(c *Common, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s.updateKey(c, msg)
	case historyMsg:
		s.listed(msg)
	case loadedMsg:
		s.loading = false
	case openExperimentMsg:
		if c.Running {
			s.loading = false // the root said why it does not open
		}
	}
	return nil
}

func (s *historyScreen) updateKey(c *Common, msg tea.KeyMsg) tea.Cmd {
	k := s.keys
	cur := s.cursor.at(len(s.list))
	switch {
	case s.cursor.update(msg, k.List, len(s.list), 10):
	case key.Matches(msg, k.Resume):
		if cur < len(s.list) {
			c.send(resumeMsg{s.list[cur]})
		}
	case key.Matches(msg, k.Open):
		if c.Running {
			c.say("a sweep is running: open history when it ends")
			return nil
		}
		if cur < len(s.list) {
			exp := s.list[cur]
			s.loading = true
			c.send(openExperimentMsg{exp})
		}
	}
	return nil
}

func (s *historyScreen) View(c *Common) string {
	st := c.Styles()
	w, h := s.w, s.h
	if errors.Is(s.err, ErrUnavailable) {
		return st.Muted.Render("History is not available in this console.")
	}
	if s.err != nil {
		return st.Danger.Render("Cannot list experiments: " + s.err.Error())
	}
	if len(s.list) == 0 {
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
	first, last := s.cursor.window(len(s.list), h-len(out)-1)
	for i := first; i < last; i++ {
		e := s.list[i]
		line := fmt.Sprintf("%-20s %-11s %6d  %s", e.ID, e.Status, e.Trials, whatWasRun(e))
		if created {
			line = fmt.Sprintf("%-20s %-11s %6d  %-16s  %s", e.ID, e.Status, e.Trials, e.Created, whatWasRun(e))
		}
		out = append(out, cursorRow(st, line, w, i == s.cursor.at(len(s.list))))
	}
	if s.loading {
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
	for _, r := range model.SortRatios(e.Ratios) {
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
