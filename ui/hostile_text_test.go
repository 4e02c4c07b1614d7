package ui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// hostileSuffix is what a task puts in every text it controls: a clear
// screen, a cursor home, an OSC title, a bell, a newline that would
// start a forged row, a carriage return, an 8-bit CSI and a bidi
// override.
const hostileSuffix = "\x1b[2J\x1b[H\x1b]0;pwned\x07\nFORGED ROW 9/9 +++\r\u009b2J\u202e"

// hostilize returns v with hostileSuffix after every plain string in it
// (IDs stay distinct and agree across events); named string types are
// headroom's own enums (outcomes, causes), not a task's text.
func hostilize[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	return suffixed(rv).Interface().(T)
}

func suffixed(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		out := reflect.New(v.Type()).Elem()
		if v.Type() == reflect.TypeOf("") && v.String() != "" {
			out.SetString(v.String() + hostileSuffix)
		} else {
			out.SetString(v.String())
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(suffixed(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(suffixed(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMap(v.Type())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(suffixed(it.Key()), suffixed(it.Value()))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(suffixed(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(suffixed(v.Elem()))
		return out
	}
	return v
}

// frameProblems says what in a frame a terminal would act on rather than
// show (the colour profile is ASCII: a frame holds no escape at all),
// and whether the frame has the lines it should.
func frameProblems(view string, h int) []string {
	var out []string
	if n := strings.Count(view, "\n") + 1; n != h {
		out = append(out, fmt.Sprintf("%d lines, want %d", n, h))
	}
	for i, line := range strings.Split(view, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " │┃║╭╰|"), "FORGED") {
			out = append(out, fmt.Sprintf("line %d starts a forged row: %q", i+1, line))
		}
		for _, r := range line {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == utf8.RuneError {
				out = append(out, fmt.Sprintf("line %d holds %U: %q", i+1, r, line))
				break
			}
		}
	}
	return out
}

// Every string a task can reach (its name, agent, steps' names and
// commands, output lines, reasons, processes, the kernel's victims, wait
// reasons, a stored log, a stored experiment's task names) holds escape
// codes and a newline: no frame of any screen carries a control
// character, and none gains a line.
func TestHostileTextNeverReachesTheTerminal(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"live", nil}, {"matrix", []string{"3"}}, {"matrix-cell", []string{"3", "enter"}},
		{"detail", []string{"3", "enter", "enter"}}, {"detail-log-end", []string{"3", "enter", "enter", "G"}},
		{"focus", []string{"4"}}, {"history", []string{"5"}}, {"help", []string{"?"}}, {"setup", []string{"1"}},
	}
	for _, sz := range sizes {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				l := &fakeLauncher{}
				opts := testOptions(t, l)
				hist := portOf(opts).history
				portOf(opts).history = func() ([]Experiment, error) {
					list, err := hist()
					return hostilize(list), err
				}
				opts.Problems = []string{"tasks/esc" + hostileSuffix + "/task.toml: broken"}
				m := New(opts)
				m = update(t, m, tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
				sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}, model.Uncapped}, Repeats: 2, Concurrency: 2, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
				var evs []event.Event
				for _, e := range scriptedEvents(sw.Plan()) {
					evs = append(evs, hostilize(e))
				}
				evs = append(evs, hostilize(event.TrialWaiting{Base: event.Base{Trial: "t0004"}, Reason: "waiting for memory"}))
				m = update(t, m, eventsMsg{events: evs})
				m = keys(t, m, sc.keys...)
				if sc.name == "history" {
					m = update(t, m, m.listHistory()())
				}
				for _, p := range frameProblems(m.View(), sz.h) {
					t.Error(p)
				}
			})
		}
	}
}
