package ui

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/model"
)

// A setup row is one agent of one task: what a trial runs.
type setupRow struct {
	task  model.Task
	agent string
}

func (r setupRow) key() string { return r.task.Name + "·" + r.agent }

type ratioToggle struct {
	ratio model.Ratio
	on    bool
}

// Setup panes, in tab order.
const (
	paneTasks = iota
	paneRatios
	paneOptions
	setupPanes
)

// Options rows.
const (
	optRepeats = iota
	optConcurrency
	optSeed
	optFocusRuns
	optCount
)

type setupModel struct {
	rows      []setupRow
	selected  map[string]bool
	cursor    int
	filter    textinput.Model
	filtering bool

	pane        int
	ratios      []ratioToggle
	ratioCursor int
	custom      textinput.Model
	customOpen  bool

	repeats, concurrency, focusRuns int
	seed                            uint64
	optCursor                       int
	err                             string
}

func newSetup(o Options) setupModel {
	s := setupModel{selected: map[string]bool{}, repeats: o.Repeats, concurrency: o.Concurrency, seed: o.Seed, focusRuns: 20}
	for _, t := range o.Tasks {
		for _, a := range t.Agents {
			s.rows = append(s.rows, setupRow{t, a.Name})
		}
	}
	for _, r := range model.StandardRatios {
		s.ratios = append(s.ratios, ratioToggle{ratio: r, on: r == (model.Ratio{K: 1}) || r == (model.Ratio{K: 3}) || r.Uncapped})
	}
	s.filter = textinput.New()
	s.filter.Prompt = "/"
	s.filter.Placeholder = "filter tasks"
	s.custom = textinput.New()
	s.custom.Prompt = "custom ratio: "
	s.custom.Placeholder = "2.5x"
	return s
}

func (s *setupModel) typing() bool { return s.filtering || s.customOpen }

// visible lists the rows matching the filter.
func (s *setupModel) visible() []setupRow {
	f := strings.ToLower(strings.TrimSpace(s.filter.Value()))
	if f == "" {
		return s.rows
	}
	var out []setupRow
	for _, r := range s.rows {
		if strings.Contains(strings.ToLower(r.key()), f) {
			out = append(out, r)
		}
	}
	return out
}

func (s *setupModel) chosenRatios() []model.Ratio {
	var out []model.Ratio
	for _, r := range s.ratios {
		if r.on {
			out = append(out, r.ratio)
		}
	}
	return out
}

// chosen returns the selected tasks, each cut down to its selected agents.
func (s *setupModel) chosen() []model.Task {
	var out []model.Task
	index := map[string]int{}
	for _, r := range s.rows {
		if !s.selected[r.key()] {
			continue
		}
		a, _ := r.task.Agent(r.agent)
		i, ok := index[r.task.Name]
		if !ok {
			t := r.task
			t.Agents = nil
			out = append(out, t)
			i = len(out) - 1
			index[r.task.Name] = i
		}
		out[i].Agents = append(out[i].Agents, a)
	}
	return out
}

func (s *setupModel) spec() (LaunchSpec, error) {
	tasks := s.chosen()
	if len(tasks) == 0 {
		return LaunchSpec{}, fmt.Errorf("select at least one task with space")
	}
	ratios := s.chosenRatios()
	if len(ratios) == 0 {
		return LaunchSpec{}, fmt.Errorf("turn on at least one ratio")
	}
	return LaunchSpec{Tasks: tasks, Ratios: ratios, Repeats: s.repeats, Concurrency: s.concurrency, Seed: s.seed}, nil
}

func (m Model) updateSetup(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	s := &m.setup
	k := m.keys
	s.err = ""
	if s.filtering {
		switch msg.String() {
		case "enter", "esc":
			s.filtering = false
			s.filter.Blur()
			if msg.String() == "esc" {
				s.filter.SetValue("")
			}
			s.cursor = 0
			return m, nil
		}
		var cmd tea.Cmd
		s.filter, cmd = s.filter.Update(msg)
		s.cursor = 0
		return m, cmd
	}
	if s.customOpen {
		switch msg.String() {
		case "esc":
			s.customOpen = false
			s.custom.Blur()
			return m, nil
		case "enter":
			r, err := model.ParseRatio(s.custom.Value())
			if err != nil {
				s.err = err.Error()
				return m, nil
			}
			for i := range s.ratios {
				if s.ratios[i].ratio == r {
					s.ratios[i].on = true
					r = model.Ratio{}
				}
			}
			if r != (model.Ratio{}) {
				s.ratios = append(s.ratios[:len(s.ratios)-1], ratioToggle{ratio: r, on: true}, s.ratios[len(s.ratios)-1])
			}
			s.customOpen = false
			s.custom.SetValue("")
			s.custom.Blur()
			return m, nil
		}
		var cmd tea.Cmd
		s.custom, cmd = s.custom.Update(msg)
		return m, cmd
	}
	switch {
	case key.Matches(msg, k.Tab):
		s.pane = (s.pane + 1) % setupPanes
		return m, nil
	case key.Matches(msg, k.ShiftTab):
		s.pane = (s.pane + setupPanes - 1) % setupPanes
		return m, nil
	case key.Matches(msg, k.Start):
		if m.Running() {
			s.err = "a sweep is running: wait for it or quit it first"
			return m, nil
		}
		spec, err := s.spec()
		if err != nil {
			s.err = err.Error()
			return m, nil
		}
		m.launching = true
		return m, m.launch(spec)
	case key.Matches(msg, k.Seed):
		s.seed = uint64(m.now().UnixNano()) >> 1
		return m, nil
	}
	switch s.pane {
	case paneTasks:
		rows := s.visible()
		switch {
		case key.Matches(msg, k.Up):
			s.cursor = max(s.cursor-1, 0)
		case key.Matches(msg, k.Down):
			s.cursor = min(s.cursor+1, max(len(rows)-1, 0))
		case key.Matches(msg, k.Top):
			s.cursor = 0
		case key.Matches(msg, k.Bottom):
			s.cursor = max(len(rows)-1, 0)
		case key.Matches(msg, k.Select):
			if s.cursor < len(rows) {
				key := rows[s.cursor].key()
				s.selected[key] = !s.selected[key]
			}
		case key.Matches(msg, k.Filter):
			s.filtering = true
			return m, s.filter.Focus()
		case key.Matches(msg, k.Focus):
			if s.cursor < len(rows) {
				return m.startFocus(rows[s.cursor].task, rows[s.cursor].agent, s.firstRatio())
			}
		}
	case paneRatios:
		n := len(s.ratios) + 1 // the last slot opens the custom entry
		switch {
		case key.Matches(msg, k.Left), key.Matches(msg, k.Up):
			s.ratioCursor = (s.ratioCursor + n - 1) % n
		case key.Matches(msg, k.Right), key.Matches(msg, k.Down):
			s.ratioCursor = (s.ratioCursor + 1) % n
		case key.Matches(msg, k.Select):
			if s.ratioCursor < len(s.ratios) {
				s.ratios[s.ratioCursor].on = !s.ratios[s.ratioCursor].on
			} else {
				s.customOpen = true
				s.custom.SetValue("")
				return m, s.custom.Focus()
			}
		}
	case paneOptions:
		switch {
		case key.Matches(msg, k.Up):
			s.optCursor = max(s.optCursor-1, 0)
		case key.Matches(msg, k.Down):
			s.optCursor = min(s.optCursor+1, optCount-1)
		case key.Matches(msg, k.Plus), key.Matches(msg, k.Right):
			s.adjust(1)
		case key.Matches(msg, k.Minus), key.Matches(msg, k.Left):
			s.adjust(-1)
		}
	}
	return m, nil
}

func (s *setupModel) firstRatio() model.Ratio {
	if r := s.chosenRatios(); len(r) > 0 {
		return r[0]
	}
	return model.Ratio{K: 1}
}

func (s *setupModel) adjust(d int) {
	switch s.optCursor {
	case optRepeats:
		s.repeats = min(max(s.repeats+d, 1), 1000)
	case optConcurrency:
		s.concurrency = min(max(s.concurrency+d, 1), 64)
	case optSeed:
		s.seed = uint64(max(int64(s.seed)+int64(d), 0))
	case optFocusRuns:
		s.focusRuns = min(max(s.focusRuns+5*d, 5), 1000)
	}
}

func (m Model) viewSetup(w, h int) string {
	st := m.theme.Styles
	s := &m.setup
	rows := s.visible()
	listH := min(max(h-12, 3), len(rows)+3)
	nSel := 0
	for _, v := range s.selected {
		if v {
			nSel++
		}
	}
	var list []string
	if s.filtering || s.filter.Value() != "" {
		list = append(list, s.filter.View())
	}
	if len(rows) == 0 {
		list = append(list, st.Muted.Render("no task matches the filter (esc clears it)"))
	}
	first := 0
	if s.cursor >= listH-1 {
		first = s.cursor - listH + 2
	}
	for i := first; i < len(rows) && len(list) < listH-2; i++ {
		r := rows[i]
		mark := "[ ]"
		if s.selected[r.key()] {
			mark = st.Selected.Render("[x]")
		}
		line := fmt.Sprintf("%s %-34s %4g CPU %7s  %s", mark, r.task.Name, r.task.Resources.CPUs, mib(r.task.Resources.MemoryBytes), r.agent)
		if i == s.cursor && s.pane == paneTasks {
			line = st.Cursor.Render(pad(line, w-4))
		}
		list = append(list, line)
	}
	title := fmt.Sprintf("Tasks · %d of %d selected", nSel, len(s.rows))
	boxStyle := st.Box
	if s.pane == paneTasks {
		boxStyle = st.FocusBox
	}
	out := []string{box(boxStyle, title, strings.Join(list, "\n"), w, listH)}

	// Ratios.
	var rb strings.Builder
	label := st.Bold.Render("Ratios ")
	if s.pane == paneRatios {
		label = st.Title.Render("Ratios ")
	}
	rb.WriteString(label)
	for i, r := range s.ratios {
		mark := "[ ]"
		if r.on {
			mark = "[x]"
		}
		item := mark + r.ratio.String()
		if r.on {
			item = st.Selected.Render(item)
		}
		if s.pane == paneRatios && i == s.ratioCursor {
			item = st.Cursor.Render(mark + r.ratio.String())
		}
		rb.WriteString(item + " ")
	}
	customLabel := "[+custom]"
	if s.pane == paneRatios && s.ratioCursor == len(s.ratios) {
		customLabel = st.Cursor.Render(customLabel)
	}
	rb.WriteString(customLabel)
	out = append(out, clip(rb.String(), w))
	if s.customOpen {
		out = append(out, "  "+s.custom.View())
	}

	// Options.
	opts := []string{fmt.Sprintf("repeats %d", s.repeats), fmt.Sprintf("concurrency %d", s.concurrency), fmt.Sprintf("seed %d", s.seed), fmt.Sprintf("focus runs %d", s.focusRuns)}
	for i := range opts {
		if s.pane == paneOptions && i == s.optCursor {
			opts[i] = st.Cursor.Render(opts[i])
		}
	}
	label = st.Bold.Render("Options ")
	if s.pane == paneOptions {
		label = st.Title.Render("Options ")
	}
	out = append(out, clip(label+strings.Join(opts, "   "), w))

	for i, p := range m.opts.Problems {
		if i == 2 {
			out = append(out, st.Danger.Render(fmt.Sprintf("… and %d more task files skipped", len(m.opts.Problems)-2)))
			break
		}
		out = append(out, st.Danger.Render(clip("skipped "+p, w)))
	}

	// Preview.
	out = append(out, "")
	out = append(out, m.preview(w)...)
	if s.err != "" {
		out = append(out, st.Danger.Render(s.err))
	}
	return fit(strings.Join(out, "\n"), w, h)
}

// preview says what will run: trial count, rough duration, and for the
// task under the cursor each ratio's guarantee, limit and docker flags.
func (m Model) preview(w int) []string {
	st := m.theme.Styles
	s := &m.setup
	tasks := s.chosen()
	ratios := s.chosenRatios()
	trials := 0
	var work time.Duration
	for _, t := range tasks {
		for _, a := range t.Agents {
			n := len(ratios) * s.repeats
			trials += n
			work += time.Duration(n) * (t.Expected(a.Name) + 300*time.Millisecond)
		}
	}
	rough := time.Duration(float64(work) / float64(max(s.concurrency, 1)))
	lines := []string{st.Bold.Render("Preview ") + fmt.Sprintf("%d trials (%d task·agent × %d ratios × %d repeats), roughly %s at concurrency %d",
		trials, trials/max(len(ratios)*s.repeats, 1), len(ratios), s.repeats, rough.Round(time.Second), s.concurrency)}
	rows := s.visible()
	if s.cursor < len(rows) {
		t := rows[s.cursor].task
		lines = append(lines, st.Muted.Render(fmt.Sprintf("%s: spec %g CPU, %s", path.Base(t.Name), t.Resources.CPUs, model.FormatBytes(t.Resources.MemoryBytes))))
		for _, r := range ratios {
			p := model.NewPolicy(t.Resources, r, m.opts.HostCPUs)
			cpus := "none"
			if p.LimitCPUs > 0 {
				cpus = strconv.FormatFloat(p.LimitCPUs, 'f', -1, 64)
			}
			limit := "none"
			if p.HardLimitBytes > 0 {
				limit = mib(p.HardLimitBytes)
			}
			lines = append(lines, clip(fmt.Sprintf("  %-8s guarantee %-7s limit %-7s cpus %-4s %s", r, mib(p.GuaranteeBytes), limit, cpus,
				st.Muted.Render(strings.Join(p.DockerRunFlags(), " "))), w))
		}
	}
	return lines
}
