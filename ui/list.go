package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/themes"
)

// listCursor is the one cursor of every list the console shows (setup's
// tasks, focus runs, a matrix cell's trials, history): it moves with the
// list keys and says which window of rows to draw so that the cursor row
// is always on screen.
type listCursor struct{ pos int }

// ListKeys move a list cursor.
type ListKeys struct{ Up, Down, Top, Bottom, PageUp, PageDown key.Binding }

func defaultListKeys() ListKeys {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return ListKeys{
		Up:       b([]string{"up", "k"}, "↑/k", "up"),
		Down:     b([]string{"down", "j"}, "↓/j", "down"),
		Top:      b([]string{"g", "home"}, "g", "top"),
		Bottom:   b([]string{"G", "end"}, "G", "bottom"),
		PageUp:   b([]string{"pgup"}, "pgup", "page up"),
		PageDown: b([]string{"pgdown"}, "pgdn", "page down"),
	}
}

func (k ListKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown}
}

// update moves the cursor over n rows (page keys by page rows); it says
// whether msg was a list key.
func (c *listCursor) update(msg tea.KeyMsg, k ListKeys, n, page int) bool {
	page = max(page, 1)
	switch {
	case key.Matches(msg, k.Up):
		c.pos--
	case key.Matches(msg, k.Down):
		c.pos++
	case key.Matches(msg, k.Top):
		c.pos = 0
	case key.Matches(msg, k.Bottom):
		c.pos = n - 1
	case key.Matches(msg, k.PageUp):
		c.pos -= page
	case key.Matches(msg, k.PageDown):
		c.pos += page
	default:
		return false
	}
	c.clamp(n)
	return true
}

// clamp keeps the cursor on one of n rows.
func (c *listCursor) clamp(n int) { c.pos = min(max(c.pos, 0), max(n-1, 0)) }

// at is the cursor's row among n (0 when the list is empty).
func (c listCursor) at(n int) int { return min(max(c.pos, 0), max(n-1, 0)) }

// window is the first and one-past-last rows to draw in h lines so the
// cursor row is among them.
func (c listCursor) window(n, h int) (first, last int) {
	h = max(h, 1)
	pos := c.at(n)
	if pos >= h {
		first = pos - h + 1
	}
	return first, min(first+h, n)
}

// cursorMark is the gutter of a list row: a marker glyph on the cursor
// row, so the cursor shows without colour (NO_COLOR drops reverse video
// and bold along with colour).
const cursorMark, noMark = "▸ ", "  "

// cursorRow draws one list row with its gutter, reversed on the cursor
// row where the terminal has colour.
func cursorRow(st themes.Styles, line string, w int, on bool) string {
	if !on {
		return clip(noMark+line, w)
	}
	return st.Cursor.Render(pad(cursorMark+line, w))
}
