package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every binding; the help bar is generated from it.
type KeyMap struct {
	Up, Down, Left, Right, Top, Bottom key.Binding
	Enter, Back, Tab, ShiftTab         key.Binding
	Screen1, Screen2, Screen3, Screen4 key.Binding
	Screen5                            key.Binding
	Select, Filter, Start              key.Binding
	Stop, Shell, Focus, Rerun          key.Binding
	CancelSweep, Baseline              key.Binding
	Search, Next, Prev, Follow, Wrap   key.Binding
	Theme, Help, Quit                  key.Binding
	Plus, Minus, Seed                  key.Binding
}

// DefaultKeys are headroom's bindings.
func DefaultKeys() KeyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Up:          b([]string{"up", "k"}, "↑/k", "up"),
		Down:        b([]string{"down", "j"}, "↓/j", "down"),
		Left:        b([]string{"left", "h"}, "←/h", "left"),
		Right:       b([]string{"right", "l"}, "→/l", "right"),
		Top:         b([]string{"g", "home"}, "g", "top"),
		Bottom:      b([]string{"G", "end"}, "G", "bottom"),
		Enter:       b([]string{"enter"}, "enter", "open"),
		Back:        b([]string{"esc"}, "esc", "back"),
		Tab:         b([]string{"tab"}, "tab", "next pane"),
		ShiftTab:    b([]string{"shift+tab"}, "shift+tab", "previous pane"),
		Screen1:     b([]string{"1"}, "1", "setup"),
		Screen2:     b([]string{"2"}, "2", "live"),
		Screen3:     b([]string{"3"}, "3", "matrix"),
		Screen4:     b([]string{"4"}, "4", "focus"),
		Screen5:     b([]string{"5"}, "5", "history"),
		Select:      b([]string{" "}, "space", "toggle"),
		Filter:      b([]string{"/"}, "/", "filter"),
		Start:       b([]string{"enter"}, "enter", "start sweep"),
		Stop:        b([]string{"x"}, "x", "stop trial"),
		Shell:       b([]string{"s"}, "s", "shell in container"),
		CancelSweep: b([]string{"X"}, "X", "cancel sweep"),
		Baseline:    b([]string{"b"}, "b", "set baseline"),
		Focus:       b([]string{"F"}, "F", "focus mode"),
		Rerun:       b([]string{"r"}, "r", "rerun exactly"),
		Search:      b([]string{"/"}, "/", "search log"),
		Next:        b([]string{"n"}, "n", "next match"),
		Prev:        b([]string{"N"}, "N", "previous match"),
		Follow:      b([]string{"f"}, "f", "follow"),
		Wrap:        b([]string{"w"}, "w", "wrap"),
		Theme:       b([]string{"t"}, "t", "theme"),
		Help:        b([]string{"?"}, "?", "help"),
		Quit:        b([]string{"q", "ctrl+c"}, "q", "quit"),
		Plus:        b([]string{"+", "="}, "+/-", "more/less"),
		Minus:       b([]string{"-"}, "-", "less"),
		Seed:        b([]string{"R"}, "R", "new seed"),
	}
}

// helpFor is the short and full help of one screen.
type helpFor struct{ short, full []key.Binding }

func (h helpFor) ShortHelp() []key.Binding  { return h.short }
func (h helpFor) FullHelp() [][]key.Binding { return [][]key.Binding{h.full} }
