package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The README's pictures are drawn from the frames here, not by a
// general tool: freeze wrote each line as one text run without glyph
// positions, so a glyph the viewer's font lacked shifted the rest of its
// line (rsvg drew staircase borders, gauges spilling into the next card,
// the matrix cell the caption is about blank). Here every cell has its
// column: each glyph is placed at its own column, and the box-drawing and block
// characters, which fonts draw worst, are drawn as shapes, so any SVG
// viewer draws the frame as the terminal does.

// termCell is one terminal cell of a frame.
type termCell struct {
	r         rune
	fg, bg    string // #rrggbb; bg "" is the terminal's own
	bold, und bool
}

// Picture geometry: a cell, the margin around the screen, the font.
const (
	svgCellW, svgCellH = 10, 20
	svgPad             = 16
	svgFontSize        = 16
	svgFG, svgBG       = "#c4c4c4", "#171717" // the terminal's own colours (spellReverse's)
)

// parseFrame reads a frame (text with SGR sequences: bold, underline,
// 256-colour and true-colour foreground and background) into cells.
func parseFrame(frame string) [][]termCell {
	sgr := regexp.MustCompile("^\x1b\\[([0-9;]*)m")
	var grid [][]termCell
	for _, line := range strings.Split(frame, "\n") {
		var row []termCell
		cur := termCell{fg: svgFG}
		for len(line) > 0 {
			if m := sgr.FindStringSubmatch(line); m != nil {
				cur = applySGR(cur, m[1])
				line = line[len(m[0]):]
				continue
			}
			r, n := utf8.DecodeRuneInString(line)
			c := cur
			c.r = r
			row = append(row, c)
			line = line[n:]
		}
		grid = append(grid, row)
	}
	return grid
}

// applySGR applies one SGR sequence's parameters to a cell's style.
func applySGR(c termCell, params string) termCell {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; p {
		case "", "0":
			c = termCell{fg: svgFG}
		case "1":
			c.bold = true
		case "4":
			c.und = true
		case "22":
			c.bold = false
		case "24":
			c.und = false
		case "39":
			c.fg = svgFG
		case "49":
			c.bg = ""
		case "38", "48":
			var col string
			switch {
			case i+2 < len(ps) && ps[i+1] == "5":
				n, _ := strconv.Atoi(ps[i+2])
				col, i = xterm256(n), i+2
			case i+4 < len(ps) && ps[i+1] == "2":
				r, _ := strconv.Atoi(ps[i+2])
				g, _ := strconv.Atoi(ps[i+3])
				b, _ := strconv.Atoi(ps[i+4])
				col, i = fmt.Sprintf("#%02x%02x%02x", r, g, b), i+4
			}
			if p == "38" {
				c.fg = col
			} else {
				c.bg = col
			}
		default:
			if n, err := strconv.Atoi(p); err == nil {
				switch {
				case n >= 30 && n <= 37:
					c.fg = xterm256(n - 30)
				case n >= 90 && n <= 97:
					c.fg = xterm256(n - 90 + 8)
				case n >= 40 && n <= 47:
					c.bg = xterm256(n - 40)
				}
			}
		}
	}
	return c
}

// xterm256 is a 256-colour palette entry as xterm draws it.
func xterm256(n int) string {
	base := []string{"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
		"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"}
	switch {
	case n < 16:
		return base[max(n, 0)]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	case n < 256:
		g := 8 + 10*(n-232)
		return fmt.Sprintf("#%02x%02x%02x", g, g, g)
	}
	return svgFG
}

// frameSVG draws a frame as an SVG picture of a terminal window.
func frameSVG(grid [][]termCell, header string) string {
	cols := 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	w, h := cols*svgCellW+2*svgPad, len(grid)*svgCellH+2*svgPad
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(header)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" rx="8" fill="%s" stroke="#515151"/>`+"\n", w, h, svgBG)
	fmt.Fprintf(&b, `<g font-family="'DejaVu Sans Mono', 'Menlo', 'Consolas', 'Liberation Mono', monospace" font-size="%d">`+"\n", svgFontSize)
	for y, row := range grid {
		top := svgPad + y*svgCellH
		// Backgrounds, as runs of one colour.
		for x := 0; x < len(row); {
			end := x + 1
			for end < len(row) && row[end].bg == row[x].bg {
				end++
			}
			if row[x].bg != "" {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", svgPad+x*svgCellW, top, (end-x)*svgCellW, svgCellH, row[x].bg)
			}
			x = end
		}
		// Shapes for the box and block characters, underlines.
		for x, c := range row {
			left := svgPad + x*svgCellW
			b.WriteString(cellShape(c, left, top))
			if c.und {
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="1" fill="%s"/>`+"\n", left, top+svgCellH-3, svgCellW, c.fg)
			}
		}
		// Text, as runs of one style, each glyph at its column.
		for x := 0; x < len(row); {
			if drawnAsShape(row[x].r) || row[x].r == ' ' {
				x++
				continue
			}
			end := x + 1
			for end < len(row) && !drawnAsShape(row[end].r) && row[end].r != ' ' && row[end].fg == row[x].fg && row[end].bold == row[x].bold {
				end++
			}
			// One text element a glyph: librsvg left out the last
			// glyph of some runs positioned glyph by glyph (x="16 26 …").
			weight := ""
			if row[x].bold {
				weight = ` font-weight="bold"`
			}
			fmt.Fprintf(&b, `<g fill="%s"%s>`, row[x].fg, weight)
			for i := x; i < end; i++ {
				fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, svgPad+i*svgCellW, top+svgCellH-5, xmlEscape(string(row[i].r)))
			}
			b.WriteString("</g>\n")
			x = end
		}
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// drawnAsShape says whether a character is drawn as a shape (cellShape)
// rather than as a glyph of the font.
func drawnAsShape(r rune) bool {
	return cellShape(termCell{r: r}, 0, 0) != ""
}

// cellShape draws a box-drawing or block character filling its cell as
// the terminal does; "" for any other character.
func cellShape(c termCell, x, y int) string {
	const light, heavy = 1, 3
	cx, cy := x+svgCellW/2, y+svgCellH/2
	rect := func(x, y, w, h int, opacity string) string {
		op := ""
		if opacity != "" {
			op = ` fill-opacity="` + opacity + `"`
		}
		return fmt.Sprintf(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"%s/>`+"\n", x, y, w, h, c.fg, op)
	}
	hline := func(x0, x1, t int) string { return rect(x0, cy-t/2, x1-x0, t, "") }
	vline := func(y0, y1, t int) string { return rect(cx-t/2, y0, t, y1-y0, "") }
	// A rounded corner: from the middle of one edge to the middle of
	// another, through the cell's centre.
	arc := func(x0, y0, x1, y1 int) string {
		return fmt.Sprintf(`<path d="M%d %d Q%d %d %d %d" fill="none" stroke="%s" stroke-width="%d"/>`+"\n", x0, y0, cx, cy, x1, y1, c.fg, light)
	}
	right, bottom := x+svgCellW, y+svgCellH
	switch r := c.r; {
	case r == '─':
		return hline(x, right, light)
	case r == '━':
		return hline(x, right, heavy)
	case r == '│':
		return vline(y, bottom, light)
	case r == '┃':
		return vline(y, bottom, heavy)
	case r == '┆':
		// Three dashes down the cell.
		var s string
		for i := 0; i < 3; i++ {
			s += rect(cx, y+i*svgCellH/3+1, light, svgCellH/3-3, "")
		}
		return s
	case r == '╭':
		return arc(cx, bottom, right, cy)
	case r == '╮':
		return arc(x, cy, cx, bottom)
	case r == '╰':
		return arc(cx, y, right, cy)
	case r == '╯':
		return arc(x, cy, cx, y)
	case r == '┏':
		return hline(cx-heavy/2, right, heavy) + vline(cy-heavy/2, bottom, heavy)
	case r == '┓':
		return hline(x, cx+heavy/2+1, heavy) + vline(cy-heavy/2, bottom, heavy)
	case r == '┗':
		return hline(cx-heavy/2, right, heavy) + vline(y, cy+heavy/2+1, heavy)
	case r == '┛':
		return hline(x, cx+heavy/2+1, heavy) + vline(y, cy+heavy/2+1, heavy)
	case r == '█':
		return rect(x, y, svgCellW, svgCellH, "")
	case r >= '▁' && r <= '▇':
		eighths := int(r-'▁') + 1
		h := svgCellH * eighths / 8
		return rect(x, bottom-h, svgCellW, h, "")
	case r == '░':
		return rect(x, y, svgCellW, svgCellH, "0.25")
	case r == '▒':
		return rect(x, y, svgCellW, svgCellH, "0.5")
	case r == '▓':
		return rect(x, y, svgCellW, svgCellH, "0.75")
	}
	return ""
}
