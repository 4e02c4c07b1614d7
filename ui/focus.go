package ui

import (
	"fmt"
	"path"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
)

// Focus mode loops one task·agent at one ratio many times, to find out
// why it dies one run in five.
type focusModel struct {
	cursor int
}

func (m Model) startFocus(task model.Task, agent string, ratio model.Ratio) (tea.Model, tea.Cmd) {
	if m.Running() {
		m.message = "a sweep is running: focus when it ends"
		return m, nil
	}
	a, ok := task.Agent(agent)
	if !ok {
		return m, nil
	}
	task.Agents = []model.Agent{a}
	spec := LaunchSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{ratio}, Repeats: m.setup.focusRuns,
		Concurrency: m.setup.concurrency, Seed: m.setup.seed, Label: "focus"}
	m.message = fmt.Sprintf("focus: %s · %s at %s, %d runs", path.Base(task.Name), agent, ratio, spec.Repeats)
	m.launching = true
	return m, m.launch(spec)
}

func (m Model) focusRuns() []*TrialView {
	if m.state == nil || m.spec.Label != "focus" {
		return nil
	}
	out := make([]*TrialView, 0, len(m.state.Order))
	for _, id := range m.state.Order {
		out = append(out, m.state.Trials[id])
	}
	return out
}

func (m Model) updateFocus(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	runs := m.focusRuns()
	k := m.keys
	f := &m.focus
	switch {
	case key.Matches(msg, k.Up):
		f.cursor = max(f.cursor-1, 0)
	case key.Matches(msg, k.Down):
		f.cursor = min(f.cursor+1, max(len(runs)-1, 0))
	case key.Matches(msg, k.Top):
		f.cursor = 0
	case key.Matches(msg, k.Bottom):
		f.cursor = max(len(runs)-1, 0)
	case key.Matches(msg, k.Enter):
		if f.cursor < len(runs) {
			m.openDetail(runs[f.cursor])
		}
	case key.Matches(msg, k.Stop):
		if m.Running() {
			m.confirm = &confirmation{prompt: "Stop the focus loop? Unfinished runs are recorded as cancelled. y/n", yes: func(m *Model) tea.Cmd {
				m.sweep.Cancel()
				return nil
			}}
		}
	}
	return m, nil
}

func (m Model) viewFocus(w, h int) string {
	st := m.theme.Styles
	runs := m.focusRuns()
	if len(runs) == 0 {
		return st.Muted.Render("Focus mode loops one task at one ratio many times and shows where its peaks fall against the limit.\n" +
			"Press F on a task in setup (1) or on a cell of the matrix (3) to start it; set the number of runs in setup's options.")
	}
	tr := runs[0].Trial
	var peaks []int64
	var outcomes []model.Outcome
	done, kills := 0, 0
	for _, v := range runs {
		if v.Phase != Finished {
			continue
		}
		done++
		if v.Killed() {
			kills++
		}
		peaks = append(peaks, v.Peak)
		outcomes = append(outcomes, v.Result.Outcome)
	}
	head := fmt.Sprintf("%s · %s at %s: %d of %d runs, killed in %s", tr.Task, tr.Agent, tr.Ratio, done, len(runs), percent(kills, done))
	out := []string{st.Title.Render(clip(head, w)),
		st.Muted.Render(clip(fmt.Sprintf("guarantee %s · limit %s · each mark is one run's peak working set", model.FormatBytes(tr.Policy.GuaranteeBytes), tr.Policy.LimitString()), w))}
	out = append(out, m.strip(peaks, outcomes, tr.Policy, w, 7)...)
	listH := h - len(out) - 1
	first := 0
	if m.focus.cursor >= listH {
		first = m.focus.cursor - listH + 1
	}
	for i := first; i < len(runs) && i < first+listH; i++ {
		v := runs[i]
		status := "queued"
		switch v.Phase {
		case Running:
			status = "running"
		case Finished:
			status = st.Outcome(v.Result.Outcome).Render(string(v.Result.Outcome))
		}
		line := fmt.Sprintf("%s r%-3d %-16s peak %-7s %s", v.Trial.ID, v.Trial.Repeat, status, mib(v.Peak), resultReason(v))
		if i == m.focus.cursor {
			line = st.Cursor.Render(clip(line, w))
		}
		out = append(out, clip(line, w))
	}
	return fit(strings.Join(out, "\n"), w, h)
}

// strip is a histogram of peaks on a memory axis, each run drawn with its
// outcome's glyph, with the guarantee and the limit marked.
func (m Model) strip(peaks []int64, outcomes []model.Outcome, p model.ResourcePolicy, w, h int) []string {
	st := m.theme.Styles
	width := max(w-2, 10)
	top := max(p.HardLimitBytes, p.GuaranteeBytes)
	for _, pk := range peaks {
		top = max(top, pk)
	}
	top = top * 21 / 20
	col := func(b int64) int { return min(int(float64(b)/float64(max(top, 1))*float64(width)), width-1) }
	stacks := make([][]model.Outcome, width)
	for i, pk := range peaks {
		c := col(pk)
		stacks[c] = append(stacks[c], outcomes[i])
	}
	rows := h - 2
	g, l := col(p.GuaranteeBytes), -1
	if p.HardLimitBytes > 0 {
		l = col(p.HardLimitBytes)
	}
	var out []string
	for r := rows - 1; r >= 0; r-- {
		var b strings.Builder
		for c := 0; c < width; c++ {
			switch {
			case r < len(stacks[c]) && (r < rows-1 || len(stacks[c]) == rows):
				b.WriteString(st.Outcome(stacks[c][r]).Render(stacks[c][r].Glyph()))
			case r == rows-1 && len(stacks[c]) > rows:
				b.WriteString(st.Bold.Render("^"))
			case c == l:
				b.WriteString(st.Limit.Render("┃"))
			case c == g:
				b.WriteString(st.Guaranteed.Render("┆"))
			default:
				b.WriteString(" ")
			}
		}
		out = append(out, b.String())
	}
	axis := []rune(strings.Repeat("─", width))
	out = append(out, st.Muted.Render(string(axis)))
	labels := []rune(strings.Repeat(" ", width))
	put := func(at int, s string) {
		if n := len([]rune(s)); at+n > len(labels) {
			at = max(len(labels)-n, 0)
		}
		for i, r := range s {
			if at+i < len(labels) && at+i >= 0 {
				labels[at+i] = r
			}
		}
	}
	put(0, "0")
	put(g, "g "+mib(p.GuaranteeBytes))
	if l >= 0 {
		put(l, "limit "+mib(p.HardLimitBytes))
	}
	out = append(out, st.Muted.Render(string(labels)))
	return out
}
