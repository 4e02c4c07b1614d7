package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every binding, one key map per screen: each screen matches
// keys only against its own map, and its help (the footer and `?`) is
// generated from the same map, so a key that works is always listed
// (TestEveryBindingIsInItsHelp checks it).
type KeyMap struct {
	Global  GlobalKeys
	Setup   SetupKeys
	Live    LiveKeys
	Matrix  MatrixKeys
	Cell    CellKeys
	Focus   FocusKeys
	History HistoryKeys
	Detail  DetailKeys
}

func bind(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// GlobalKeys work on every screen (except while text is typed).
type GlobalKeys struct {
	Screen1, Screen2, Screen3, Screen4, Screen5 key.Binding
	Next, Prev, Theme, Help, Quit               key.Binding
}

// ShortHelp is what the footer always keeps: help and quit.
func (k GlobalKeys) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Quit} }

// FullHelp lists every global binding.
func (k GlobalKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Screen1, k.Screen2, k.Screen3, k.Screen4, k.Screen5, k.Next, k.Prev, k.Theme, k.Help, k.Quit}}
}

// SetupKeys: the task list, the ratio toggles and the options.
type SetupKeys struct {
	List                                     ListKeys
	Pane, PanePrev, Left, Right              key.Binding
	Select, Filter, Plus, Minus, Seed, Focus key.Binding
	Start                                    key.Binding
	// ClearFilter clears a filter kept with enter.
	ClearFilter key.Binding
	// FilterEntry and CustomEntry close the task filter and the custom
	// ratio's entry while they are open.
	FilterEntry, CustomEntry EntryKeys
}

// EntryKeys close a text entry (setup's task filter and custom ratio,
// the detail's log search); while one is open every other key is typed
// into it, and the footer shows these.
type EntryKeys struct {
	Apply, Cancel key.Binding
}

func (k EntryKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Apply, k.Cancel} }
func (k EntryKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

func (k SetupKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Select, k.Start, k.Pane, k.Filter, k.Plus, k.Focus}
}

func (k SetupKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.List.bindings(),
		{k.Pane, k.PanePrev, k.Left, k.Right, k.Select, k.Filter, k.Plus, k.Minus, k.Seed, k.Focus, k.Start},
		{k.ClearFilter, k.FilterEntry.Apply, k.FilterEntry.Cancel, k.CustomEntry.Apply, k.CustomEntry.Cancel}}
}

// LiveKeys: the trial cards.
type LiveKeys struct {
	Up, Down, Left, Right, Open, Stop, CancelSweep, Shell key.Binding
}

func (k LiveKeys) ShortHelp() []key.Binding {
	return []key.Binding{moveHelp("card", k.Up, k.Down, k.Left, k.Right), k.Open, k.Stop, k.CancelSweep, k.Shell}
}

// moveHelp is one footer entry for a set of move keys (it is only shown;
// the bindings themselves are in the full help).
func moveHelp(what string, ks ...key.Binding) key.Binding {
	var keys []string
	for _, k := range ks {
		keys = append(keys, k.Keys()...)
	}
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp("←↑↓→/hjkl", what))
}

func (k LiveKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Left, k.Right}, {k.Open, k.Stop, k.CancelSweep, k.Shell}}
}

// MatrixKeys: the outcome matrix's cell cursor.
type MatrixKeys struct {
	Up, Down, Left, Right, Top, Bottom key.Binding
	Open, Baseline, Focus              key.Binding
}

func (k MatrixKeys) ShortHelp() []key.Binding {
	return []key.Binding{moveHelp("cell", k.Up, k.Down, k.Left, k.Right), k.Open, k.Baseline, k.Focus}
}

func (k MatrixKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Left, k.Right, k.Top, k.Bottom}, {k.Open, k.Baseline, k.Focus}}
}

// CellKeys: the list of one matrix cell's trials.
type CellKeys struct {
	List       ListKeys
	Open, Back key.Binding
}

func (k CellKeys) ShortHelp() []key.Binding { return []key.Binding{k.List.Up, k.Open, k.Back} }
func (k CellKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.List.bindings(), {k.Open, k.Back}}
}

// FocusKeys: focus mode's run list.
type FocusKeys struct {
	List       ListKeys
	Open, Stop key.Binding
}

func (k FocusKeys) ShortHelp() []key.Binding { return []key.Binding{k.List.Up, k.Open, k.Stop} }
func (k FocusKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.List.bindings(), {k.Open, k.Stop}}
}

// HistoryKeys: the past experiments.
type HistoryKeys struct {
	List         ListKeys
	Open, Resume key.Binding
}

func (k HistoryKeys) ShortHelp() []key.Binding { return []key.Binding{k.List.Up, k.Open, k.Resume} }
func (k HistoryKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.List.bindings(), {k.Open, k.Resume}}
}

// DetailKeys: one trial's detail and its log.
type DetailKeys struct {
	Back, Scroll, Top, Bottom               key.Binding
	Search, Next, Prev, Follow, Wrap, Rerun key.Binding
	// SearchEntry closes the log search's entry while it is open.
	SearchEntry EntryKeys
}

func (k DetailKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Back, k.Search, k.Next, k.Follow, k.Wrap, k.Rerun}
}

func (k DetailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Back, k.Scroll, k.Top, k.Bottom}, {k.Search, k.Next, k.Prev, k.Follow, k.Wrap, k.Rerun}, k.SearchEntry.ShortHelp()}
}

// DefaultKeys are headroom's bindings.
func DefaultKeys() KeyMap {
	list := defaultListKeys()
	back := bind([]string{"esc"}, "esc", "back")
	return KeyMap{
		Global: GlobalKeys{
			Screen1: bind([]string{"1"}, "1", "setup"),
			Screen2: bind([]string{"2"}, "2", "live"),
			Screen3: bind([]string{"3"}, "3", "matrix"),
			Screen4: bind([]string{"4"}, "4", "focus"),
			Screen5: bind([]string{"5"}, "5", "history"),
			Next:    bind([]string{"tab"}, "tab", "next screen"),
			Prev:    bind([]string{"shift+tab"}, "shift+tab", "previous screen"),
			Theme:   bind([]string{"t"}, "t", "theme"),
			Help:    bind([]string{"?"}, "?", "help"),
			Quit:    bind([]string{"q", "ctrl+c"}, "q", "quit"),
		},
		Setup: SetupKeys{
			List:        list,
			Pane:        bind([]string{"tab"}, "tab", "next pane"),
			PanePrev:    bind([]string{"shift+tab"}, "shift+tab", "previous pane"),
			Left:        bind([]string{"left", "h"}, "←/h", "previous ratio · less"),
			Right:       bind([]string{"right", "l"}, "→/l", "next ratio · more"),
			Select:      bind([]string{" "}, "space", "toggle"),
			Filter:      bind([]string{"/"}, "/", "filter tasks"),
			Plus:        bind([]string{"+", "="}, "+", "more"),
			Minus:       bind([]string{"-"}, "-", "less"),
			Seed:        bind([]string{"R"}, "R", "new seed"),
			Focus:       bind([]string{"F"}, "F", "focus mode on the row"),
			Start:       bind([]string{"enter"}, "enter", "start sweep"),
			ClearFilter: bind([]string{"esc"}, "esc", "clear a kept filter"),
			FilterEntry: EntryKeys{Apply: bind([]string{"enter"}, "enter", "keep the filter being typed"), Cancel: bind([]string{"esc"}, "esc", "drop the filter being typed")},
			CustomEntry: EntryKeys{Apply: bind([]string{"enter"}, "enter", "add the ratio being typed"), Cancel: bind([]string{"esc"}, "esc", "drop the ratio being typed")},
		},
		Live: LiveKeys{
			Up: bind([]string{"up", "k"}, "↑/k", "card above"), Down: bind([]string{"down", "j"}, "↓/j", "card below"),
			Left: bind([]string{"left", "h"}, "←/h", "previous card"), Right: bind([]string{"right", "l"}, "→/l", "next card"),
			Open:        bind([]string{"enter"}, "enter", "open"),
			Stop:        bind([]string{"x"}, "x", "stop trial"),
			CancelSweep: bind([]string{"X"}, "X", "cancel sweep"),
			Shell:       bind([]string{"s"}, "s", "shell"),
		},
		Matrix: MatrixKeys{
			Up: bind([]string{"up", "k"}, "↑/k", "row up"), Down: bind([]string{"down", "j"}, "↓/j", "row down"),
			Left: bind([]string{"left", "h"}, "←/h", "ratio left"), Right: bind([]string{"right", "l"}, "→/l", "ratio right"),
			Top: list.Top, Bottom: list.Bottom,
			Open:     bind([]string{"enter"}, "enter", "cell's trials"),
			Baseline: bind([]string{"b"}, "b", "set baseline"),
			Focus:    bind([]string{"F"}, "F", "focus mode on the cell"),
		},
		Cell:    CellKeys{List: list, Open: bind([]string{"enter"}, "enter", "open trial"), Back: bind([]string{"esc"}, "esc", "back to matrix")},
		Focus:   FocusKeys{List: list, Open: bind([]string{"enter"}, "enter", "open run"), Stop: bind([]string{"x"}, "x", "stop the loop")},
		History: HistoryKeys{List: list, Open: bind([]string{"enter"}, "enter", "open read-only"), Resume: bind([]string{"r"}, "r", "resume")},
		Detail: DetailKeys{
			Back:        back,
			Scroll:      bind([]string{"up", "down", "k", "j", "pgup", "pgdown", "u", "d", "b", " "}, "↑↓/pgup/pgdn", "scroll log"),
			Top:         bind([]string{"g", "home"}, "g", "log top"),
			Bottom:      bind([]string{"G", "end"}, "G", "log end"),
			Search:      bind([]string{"/"}, "/", "search log"),
			Next:        bind([]string{"n"}, "n", "next match"),
			Prev:        bind([]string{"N"}, "N", "previous match"),
			Follow:      bind([]string{"f"}, "f", "follow"),
			Wrap:        bind([]string{"w"}, "w", "wrap"),
			Rerun:       bind([]string{"r"}, "r", "rerun exactly"),
			SearchEntry: EntryKeys{Apply: bind([]string{"enter"}, "enter", "search for what is typed"), Cancel: bind([]string{"esc"}, "esc", "close the search")},
		},
	}
}
