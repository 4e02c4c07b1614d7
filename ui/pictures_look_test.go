package ui

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The README's pictures look like the console to a reader: each is
// drawn by an SVG renderer a reader has (librsvg's rsvg-convert, a
// headless Chromium: whichever are installed) and compared, cell by
// cell, with the frame it was drawn from: a glyph where the frame has
// one, nothing where it has a blank (a line shifted by a missing glyph
// draws into blanks: rsvg drew freeze's pictures with staircase borders
// and gauges spilling into the next card), a block or a background in
// its colour, and no cell of text left blank (the matrix cell the
// caption is about was). Without any renderer the test is skipped; CI
// must have both librsvg and a browser.
func TestPicturesLookLikeTheFrames(t *testing.T) {
	renderers := pictureRenderers()
	if os.Getenv("CI") != "" {
		// CI checks them as both kinds of reader see them: librsvg (what
		// most image viewers use) and a browser (what a README is read in).
		_, rsvg := renderers["rsvg-convert"]
		if !rsvg || len(renderers) < 2 {
			t.Fatalf("CI draws the pictures with rsvg-convert and a headless browser, and has %d of them (apt-get install librsvg2-bin chromium)", len(renderers))
		}
	}
	if len(renderers) == 0 {
		t.Skip("no SVG renderer: apt-get install librsvg2-bin (or chromium)")
	}
	for _, p := range pictures {
		frame, err := os.ReadFile(filepath.Join("testdata", "TestPictureFrames", p.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		svg, err := filepath.Abs(picturePath(p.name))
		if err != nil {
			t.Fatal(err)
		}
		for name, render := range renderers {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				img, err := render(t, svg)
				if err != nil {
					t.Fatal(err)
				}
				if bad := lookLikeFrame(img, parseFrame(string(frame))); len(bad) > 0 {
					t.Errorf("%d cells of %s drawn by %s differ from the frame, first: %s", len(bad), svg, name, strings.Join(bad[:min(len(bad), 8)], "; "))
				}
			})
		}
	}
}

type pictureRenderer func(t *testing.T, svg string) (image.Image, error)

// pictureRenderers are the SVG renderers on this machine, by name.
func pictureRenderers() map[string]pictureRenderer {
	out := map[string]pictureRenderer{}
	if _, err := exec.LookPath("rsvg-convert"); err == nil {
		out["rsvg-convert"] = func(t *testing.T, svg string) (image.Image, error) {
			png := filepath.Join(t.TempDir(), "picture.png")
			if o, err := exec.Command("rsvg-convert", "-f", "png", "-o", png, svg).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("rsvg-convert: %v: %s", err, o)
			}
			return readPNG(png)
		}
	}
	for _, browser := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(browser); err != nil {
			continue
		}
		out[browser] = func(t *testing.T, svg string) (image.Image, error) {
			dir := t.TempDir()
			png := filepath.Join(dir, "picture.png")
			w, h := svgSize(svg)
			cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir="+dir,
				fmt.Sprintf("--window-size=%d,%d", w, h), "--screenshot="+png, "file://"+svg)
			if o, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("%s: %v: %s", browser, err, o)
			}
			return readPNG(png)
		}
		break
	}
	return out
}

// svgSize is a picture's width and height (frameSVG's geometry).
func svgSize(svg string) (int, int) {
	b, _ := os.ReadFile(svg)
	s := string(b)
	get := func(attr string) int {
		i := strings.Index(s, "<svg ")
		j := strings.Index(s[i:], attr+`="`)
		if i < 0 || j < 0 {
			return 0
		}
		v := s[i+j+len(attr)+2:]
		n, _ := strconv.Atoi(v[:strings.IndexByte(v, '"')])
		return n
	}
	return get("width"), get("height")
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return png.Decode(f)
}

// lookLikeFrame compares a drawn picture with its frame, cell by cell,
// and says where they differ.
func lookLikeFrame(img image.Image, grid [][]termCell) []string {
	var bad []string
	for y, row := range grid {
		for x, c := range row {
			left, top := svgPad+x*svgCellW, svgPad+y*svgCellH
			bg := svgBG
			if c.bg != "" {
				bg = c.bg
			}
			where := fmt.Sprintf("row %d col %d %q", y+1, x+1, c.r)
			// The cell's inside, off its edges (a glyph may overhang a
			// pixel or two).
			ink := 0
			for py := top + 3; py < top+svgCellH-3; py++ {
				for px := left + 2; px < left+svgCellW-2; px++ {
					if colorDistance(img.At(px, py), bg) > 24 {
						ink++
					}
				}
			}
			switch {
			case c.r == '█':
				if colorDistance(img.At(left+svgCellW/2, top+svgCellH/2), c.fg) > 60 {
					bad = append(bad, where+": not a block in its colour")
				}
			case c.r == ' ' && c.und:
				if colorDistance(img.At(left+svgCellW/2, top+svgCellH-3), c.fg) > 60 {
					bad = append(bad, where+": an underline not drawn")
				}
			case c.r == ' ':
				if ink > 0 {
					bad = append(bad, where+": a blank with ink in it")
				}
				if colorDistance(img.At(left+svgCellW/2, top+svgCellH/2), bg) > 60 {
					bad = append(bad, where+": a blank not in its background")
				}
			case c.r == '░' || c.r == '▒' || c.r == '┆' || c.r == '·' || c.r == '.' || c.r == ',' || c.r == '_' || c.r == '\'' || c.r == ':' || c.r == '…':
				// Faint or small glyphs: drawn, not measured.
			case c.r >= '▁' && c.r <= '▇':
				if colorDistance(img.At(left+svgCellW/2, top+svgCellH-2), c.fg) > 60 {
					bad = append(bad, where+": not a block in its colour")
				}
			case ink == 0:
				bad = append(bad, where+": blank where the frame has a glyph")
			}
		}
	}
	return bad
}

// colorDistance is how far a pixel is from a #rrggbb colour (the largest
// of its channels' differences).
func colorDistance(c color.Color, hex string) int {
	r, g, b, _ := c.RGBA()
	want, _ := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	d := func(have uint32, want uint64) int {
		return max(int(have>>8)-int(want), int(want)-int(have>>8))
	}
	return max(d(r, want>>16&0xff), d(g, want>>8&0xff), d(b, want&0xff))
}
