package report

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

var (
	blue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	red    = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	grey   = color.RGBA{R: 127, G: 127, B: 127, A: 255}
	green  = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	orange = color.RGBA{R: 255, G: 127, B: 14, A: 255}
	purple = color.RGBA{R: 148, G: 103, B: 189, A: 255}
)

// CheckPlotFile says whether a plot can be drawn to file: its name must
// end in .png or .svg (the formats gonum/plot draws here).
func CheckPlotFile(file string) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("plot file %s: use a .png or .svg name", file)
}

// ratioTicks labels the x axis with the ratios.
type ratioTicks []model.Ratio

func (t ratioTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, r := range t {
		out = append(out, plot.Tick{Value: float64(i), Label: r.String()})
	}
	return out
}

// Plot draws what a ratio sweep is for — success and infra-error rate against
// ratio with 95% error bars — beside every trial's peak memory as a
// multiple of its task's spec, against the ratios' limits.
func (r *Report) Plot(file string) error {
	if err := CheckPlotFile(file); err != nil {
		return err
	}
	rates, err := r.ratesPlot()
	if err != nil {
		return err
	}

	peaks := plot.New()
	peaks.Title.Text = "Peak memory / spec, every trial"
	peaks.Y.Label.Text = "peak (samples or kernel) ÷ task spec"
	peaks.X.Label.Text = "task · agent"
	var names []string
	spec := map[string]int64{}
	if r.Manifest != nil {
		for _, t := range r.Manifest.Tasks {
			spec[t.Name] = t.Resources.MemoryBytes
		}
	}
	var kept, killed, stalled, survived plotter.XYs
	top := 1.0
	for i, row := range r.Matrix.Rows {
		names = append(names, strings.TrimPrefix(row.Task, "builtin/")+"·"+row.Agent)
		for _, t := range r.Trials {
			if t.Task != row.Task || t.Agent != row.Agent || t.Outcome == model.Cancelled {
				continue
			}
			s := spec[t.Task]
			if s == 0 {
				s = t.Policy.GuaranteeBytes
			}
			if s == 0 {
				continue
			}
			y := float64(model.TrialPeakBytes(t)) / float64(s)
			top = max(top, y)
			pt := plotter.XY{X: float64(i) + float64(t.Repeat%7-3)*0.04, Y: y}
			switch {
			case t.MemoryFailure() == model.KilledAtLimit:
				killed = append(killed, pt)
			case t.MemoryFailure() == model.StalledAtLimit:
				stalled = append(stalled, pt)
			case len(t.OOMs) > 0:
				survived = append(survived, pt)
			default:
				kept = append(kept, pt)
			}
		}
	}
	for _, ratio := range r.Matrix.Ratios {
		if ratio.Uncapped || ratio.K > top*1.2 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: ratio.K}, {X: float64(len(names)) - 0.5, Y: ratio.K}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = grey, []vg.Length{vg.Points(4), vg.Points(3)}
		peaks.Add(l)
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: -0.5, Y: ratio.K}}, Labels: []string{ratio.String() + " limit"}})
		if err == nil {
			peaks.Add(lbl)
		}
	}
	for _, set := range []struct {
		pts  plotter.XYs
		col  color.Color
		name string
	}{{kept, green, "not killed"}, {survived, orange, "a process killed, survived"}, {killed, red, "OOM-killed (peak = limit)"}, {stalled, purple, "stalled at the limit"}} {
		if len(set.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.pts)
		if err != nil {
			return err
		}
		sc.Color = set.col
		sc.GlyphStyle.Radius = vg.Points(2.5)
		peaks.Add(sc)
		peaks.Legend.Add(set.name, sc)
	}
	peaks.Legend.Top = true
	peaks.Y.Min, peaks.Y.Max = 0, top*1.25
	peaks.X.Min, peaks.X.Max = -0.5, float64(len(names))-0.5
	peaks.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var out []plot.Tick
		for i, n := range names {
			out = append(out, plot.Tick{Value: float64(i), Label: n})
		}
		return out
	})
	peaks.X.Tick.Label.Rotation = 0.5
	peaks.X.Tick.Label.XAlign = draw.XRight
	return saveSideBySide(file, rates, peaks)
}

// ratesPlot draws success and infra-error rate against ratio with 95%
// error bars.
func (r *Report) ratesPlot() (*plot.Plot, error) {
	rates := plot.New()
	rates.Title.Text = "Outcome rate by resource ratio"
	rates.Y.Label.Text = "rate (95% CI, clustered by task)"
	rates.X.Label.Text = "hard limit / spec"
	rates.Y.Min, rates.Y.Max = 0, 1.2 // room above 100% for the legend
	rates.X.Tick.Marker = ratioTicks(r.Matrix.Ratios)
	// Half a slot of room on each side, so one ratio sits in the middle
	// rather than at both edges.
	rates.X.Min, rates.X.Max = -0.5, float64(len(r.Matrix.Ratios))-0.5
	rates.Add(plotter.NewGrid())
	for _, series := range []struct {
		name  string
		col   color.Color
		shift float64
		pick  func(model.RatioStats) model.Estimate
	}{{"success", blue, -0.05, func(s model.RatioStats) model.Estimate { return s.Success }},
		{"infra error (OOM + infra)", red, 0.05, func(s model.RatioStats) model.Estimate { return s.Infra }}} {
		pts, errs := rateSeries(r.Analysis.ByRatio, series.pick, series.shift)
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = series.col, series.col
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{pts, errs})
		if err != nil {
			return nil, err
		}
		bars.Color = series.col
		rates.Add(line, points, bars)
		rates.Legend.Add(series.name, line, points)
	}
	rates.Legend.Top = true
	return rates, nil
}

// rateSeries is one rate's points and 95% error bars, one per ratio.
func rateSeries(stats []model.RatioStats, pick func(model.RatioStats) model.Estimate, shift float64) (plotter.XYs, plotter.YErrors) {
	var pts plotter.XYs
	var errs plotter.YErrors
	for i, rs := range stats {
		e := pick(rs)
		pts = append(pts, plotter.XY{X: float64(i) + shift, Y: e.Mean})
		errs = append(errs, struct{ Low, High float64 }{e.Mean - e.CI.Lo, e.CI.Hi - e.Mean})
	}
	return pts, errs
}

func saveSideBySide(file string, left, right *plot.Plot) error {
	w, h := 14*vg.Inch, 6*vg.Inch
	var c draw.Canvas
	var save func() error
	if strings.EqualFold(filepath.Ext(file), ".svg") {
		sc := vgsvg.New(w, h)
		c = draw.New(sc)
		save = func() error { return writeTo(file, sc) }
	} else {
		ic := vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		c = draw.New(ic)
		save = func() error { return writeTo(file, ic) }
	}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6, PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, c)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	return save()
}

// PlotTrial draws one trial's memory timeline with the guarantee, the
// limit, the steps and the OOM moments.
func (r *Report) PlotTrial(id string, samples []event.Sample, file string) error {
	if err := CheckPlotFile(file); err != nil {
		return err
	}
	var tr *model.TrialResult
	for i := range r.Trials {
		if r.Trials[i].ID == id {
			tr = &r.Trials[i]
		}
	}
	if tr == nil {
		return fmt.Errorf("no trial %s in %s", id, r.Experiment)
	}
	if len(samples) == 0 {
		return fmt.Errorf("trial %s has no memory samples", id)
	}
	t0 := samples[0].Time
	at := func(t time.Time) float64 { return t.Sub(t0).Seconds() }
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s  %s · %s at %s, repeat %d: %s, peak %s", id, tr.Task, tr.Agent, tr.Ratio, tr.Repeat, tr.OutcomeWord(),
		model.TrialPeakLabel(*tr, model.FormatBytes))
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "MiB"
	p.Add(plotter.NewGrid())
	var ws, usage plotter.XYs
	for _, s := range samples {
		ws = append(ws, plotter.XY{X: at(s.Time), Y: float64(s.WorkingSetBytes) / (1 << 20)})
		usage = append(usage, plotter.XY{X: at(s.Time), Y: float64(s.UsageBytes) / (1 << 20)})
	}
	end := at(samples[len(samples)-1].Time)
	hline := func(y float64, col color.Color, name string) error {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: end, Y: y}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = col, []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	for _, set := range []struct {
		pts  plotter.XYs
		col  color.Color
		name string
	}{{usage, grey, "usage (with cache)"}, {ws, blue, "working set"}} {
		l, err := plotter.NewLine(set.pts)
		if err != nil {
			return err
		}
		l.Color = set.col
		p.Add(l)
		p.Legend.Add(set.name, l)
	}
	if err := hline(float64(tr.Policy.GuaranteeBytes)/(1<<20), green, "guarantee"); err != nil {
		return err
	}
	if tr.Policy.HardLimitBytes > 0 {
		if err := hline(float64(tr.Policy.HardLimitBytes)/(1<<20), red, "hard limit"); err != nil {
			return err
		}
	}
	top := float64(max(model.TrialPeakBytes(*tr), tr.Policy.HardLimitBytes, tr.Policy.GuaranteeBytes)) / (1 << 20) * 1.4
	var marks []timeMark
	// mark draws a vertical line at t; its label is placed below.
	mark := func(t time.Time, col color.Color, width vg.Length, label string) {
		x := at(t)
		l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top}})
		l.Color, l.Width = col, width
		p.Add(l)
		marks = append(marks, timeMark{x: x, label: label})
	}
	// OOM kills first: when labels crowd, theirs are the ones kept.
	for _, o := range tr.OOMs {
		mark(o.At, orange, vg.Points(2), " OOM kill in "+o.Step)
	}
	for _, s := range tr.Steps {
		label := " " + s.Name
		if s.CPU != nil && s.CPU.ThrottledNanos > 0 {
			// The CPU limit held the step back: say how much.
			label += fmt.Sprintf(" (CPU throttled %.0f%%)", 100*s.CPU.ThrottledShare())
		}
		mark(s.Start, grey, vg.Points(0.5), label)
	}
	if lbl := markLabels(marks, end, top); lbl != nil {
		p.Add(lbl)
	}
	p.Y.Min, p.Y.Max = 0, top
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(10*vg.Inch, 5*vg.Inch, file)
}

// timeMark is a labelled moment on a trial's timeline.
type timeMark struct {
	x     float64
	label string
}

// trialPlotDataWidth is about how wide the trial plot's data area is
// (the 10 in plot less its y axis), to turn label widths into seconds.
const trialPlotDataWidth = 9 * vg.Inch

// markLabels places the marks' labels in rows under the top of the plot
// so that none overlaps another: each takes the first row where it
// clears the label before it, and a label with no room in any row is
// left out (its line is still drawn). Earlier marks win.
func markLabels(marks []timeMark, span, top float64) *plotter.Labels {
	if len(marks) == 0 || span <= 0 {
		return nil
	}
	var all plotter.XYLabels
	for _, m := range marks {
		all.XYs = append(all.XYs, plotter.XY{X: m.x})
		all.Labels = append(all.Labels, m.label)
	}
	sized, err := plotter.NewLabels(all)
	if err != nil {
		return nil
	}
	widths := make([]float64, len(marks))
	for i, m := range marks {
		widths[i] = float64(sized.TextStyle[i].Width(m.label)/trialPlotDataWidth) * span
	}
	rows := labelRows(marks, widths, 6)
	var placed plotter.XYLabels
	for i, m := range marks {
		if rows[i] < 0 {
			continue
		}
		placed.XYs = append(placed.XYs, plotter.XY{X: m.x, Y: top * (0.8 - 0.06*float64(rows[i]))})
		placed.Labels = append(placed.Labels, m.label)
	}
	lbl, err := plotter.NewLabels(placed)
	if err != nil {
		return nil
	}
	return lbl
}

// labelRows gives each label (starting at marks[i].x, widths[i] wide, in
// the same units) the first of n rows where it starts after the end of
// every label already there, or -1 when no row has room.
func labelRows(marks []timeMark, widths []float64, n int) []int {
	type span struct{ lo, hi float64 }
	taken := make([][]span, n)
	out := make([]int, len(marks))
	for i, m := range marks {
		out[i] = -1
		lo, hi := m.x, m.x+widths[i]
	rows:
		for row := range taken {
			for _, s := range taken[row] {
				if lo < s.hi && s.lo < hi {
					continue rows
				}
			}
			taken[row] = append(taken[row], span{lo, hi})
			out[i] = row
			break
		}
	}
	return out
}
