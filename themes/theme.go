// Package themes holds the console's colours as semantic roles, so a
// screen asks for "Danger" or "Limit" and never names a colour. Dark,
// light and high-contrast themes, plus a plain one for NO_COLOR.
package themes

import (
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Palette is a theme's roles. A nil-like NoColor keeps the terminal's
// default foreground: text is never forced to white or black.
type Palette struct {
	Text, Muted, Border, Focus lipgloss.TerminalColor
	OK, Warn, Danger           lipgloss.TerminalColor
	Guaranteed, Limit, OOM     lipgloss.TerminalColor
	WorkingSet, Cache          lipgloss.TerminalColor
}

// Theme is a named palette with its styles derived once.
type Theme struct {
	Name    string
	Palette Palette
	Styles  Styles
}

// Styles are what the console renders with.
type Styles struct {
	Text, Muted, Bold, Title     lipgloss.Style
	OK, Warn, Danger             lipgloss.Style
	Guaranteed, Limit, OOM       lipgloss.Style
	WorkingSet, Cache, GaugeFree lipgloss.Style
	Box, FocusBox, OOMBox        lipgloss.Style
	Selected, Cursor             lipgloss.Style
	OOMBanner                    lipgloss.Style
	TabActive, Tab               lipgloss.Style
	HelpKey, HelpDesc            lipgloss.Style
}

func derive(name string, p Palette, plain bool) Theme {
	fg := func(c lipgloss.TerminalColor) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Border)
	s := Styles{
		Text:       fg(p.Text),
		Muted:      fg(p.Muted),
		Bold:       fg(p.Text).Bold(true),
		Title:      fg(p.Focus).Bold(true),
		OK:         fg(p.OK),
		Warn:       fg(p.Warn),
		Danger:     fg(p.Danger).Bold(true),
		Guaranteed: fg(p.Guaranteed),
		Limit:      fg(p.Limit).Bold(true),
		OOM:        fg(p.OOM).Bold(true),
		WorkingSet: fg(p.WorkingSet),
		Cache:      fg(p.Cache),
		GaugeFree:  fg(p.Muted),
		Box:        box,
		FocusBox:   box.BorderForeground(p.Focus),
		OOMBox:     box.Border(lipgloss.ThickBorder()).BorderForeground(p.OOM),
		Selected:   fg(p.Focus).Bold(true),
		Cursor:     lipgloss.NewStyle().Reverse(true),
		OOMBanner:  fg(p.OOM).Bold(true).Reverse(true),
		TabActive:  fg(p.Focus).Bold(true).Underline(true),
		Tab:        fg(p.Muted),
		HelpKey:    fg(p.Text).Bold(true),
		HelpDesc:   fg(p.Muted),
	}
	if plain {
		s.OOMBox = box.Border(lipgloss.ThickBorder())
	}
	return Theme{Name: name, Palette: p, Styles: s}
}

// Dark suits dark terminals.
func Dark() Theme {
	return derive("dark", Palette{
		Text: lipgloss.NoColor{}, Muted: lipgloss.Color("245"), Border: lipgloss.Color("240"), Focus: lipgloss.Color("75"),
		OK: lipgloss.Color("78"), Warn: lipgloss.Color("214"), Danger: lipgloss.Color("203"),
		Guaranteed: lipgloss.Color("117"), Limit: lipgloss.Color("203"), OOM: lipgloss.Color("196"),
		WorkingSet: lipgloss.Color("75"), Cache: lipgloss.Color("24"),
	}, false)
}

// Light suits light terminals.
func Light() Theme {
	return derive("light", Palette{
		Text: lipgloss.NoColor{}, Muted: lipgloss.Color("243"), Border: lipgloss.Color("250"), Focus: lipgloss.Color("25"),
		OK: lipgloss.Color("28"), Warn: lipgloss.Color("130"), Danger: lipgloss.Color("160"),
		Guaranteed: lipgloss.Color("31"), Limit: lipgloss.Color("160"), OOM: lipgloss.Color("124"),
		WorkingSet: lipgloss.Color("25"), Cache: lipgloss.Color("110"),
	}, false)
}

// HighContrast uses the 16 basic colours only, bright and bold.
func HighContrast() Theme {
	return derive("high-contrast", Palette{
		Text: lipgloss.NoColor{}, Muted: lipgloss.NoColor{}, Border: lipgloss.Color("15"), Focus: lipgloss.Color("11"),
		OK: lipgloss.Color("10"), Warn: lipgloss.Color("11"), Danger: lipgloss.Color("9"),
		Guaranteed: lipgloss.Color("14"), Limit: lipgloss.Color("9"), OOM: lipgloss.Color("9"),
		WorkingSet: lipgloss.Color("14"), Cache: lipgloss.Color("12"),
	}, false)
}

// Plain has no colour at all (NO_COLOR): meaning is carried by glyphs,
// bold and reverse video.
func Plain() Theme {
	n := lipgloss.NoColor{}
	return derive("plain", Palette{Text: n, Muted: n, Border: n, Focus: n, OK: n, Warn: n, Danger: n, Guaranteed: n, Limit: n, OOM: n, WorkingSet: n, Cache: n}, true)
}

// Names lists the themes in cycling order.
func Names() []string { return []string{"dark", "light", "high-contrast", "plain"} }

// ByName returns a theme; "" picks plain when NO_COLOR is set, else dark.
func ByName(name string) (Theme, error) {
	switch strings.ToLower(name) {
	case "":
		if NoColor() {
			return Plain(), nil
		}
		return Dark(), nil
	case "dark":
		return Dark(), nil
	case "light":
		return Light(), nil
	case "high-contrast", "hc":
		return HighContrast(), nil
	case "plain", "none":
		return Plain(), nil
	}
	return Theme{}, fmt.Errorf("unknown theme %q: use one of %s", name, strings.Join(Names(), ", "))
}

// Next is the theme after t in cycling order.
func Next(t Theme) Theme {
	names := Names()
	for i, n := range names {
		if n == t.Name {
			next, _ := ByName(names[(i+1)%len(names)])
			return next
		}
	}
	return Dark()
}

// NoColor reports whether the user asked for no colour (no-color.org).
func NoColor() bool { return os.Getenv("NO_COLOR") != "" }

// Tone is the style of a colour's fixed meaning, named by its role: "ok",
// "warn", "oom", "danger"; any other is muted. The console maps what it
// shows (an outcome, a cause) to a role; a theme knows only colours.
func (s Styles) Tone(role string) lipgloss.Style {
	switch role {
	case "ok":
		return s.OK
	case "warn":
		return s.Warn
	case "oom":
		return s.OOM
	case "danger":
		return s.Danger
	}
	return s.Muted
}
