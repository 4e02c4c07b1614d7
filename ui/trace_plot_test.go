package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
	"github.com/headroom-eval/headroom/store/storegen"
	"github.com/headroom-eval/headroom/themes"
)

// A finished trial's compacted trace draws the detail screen's memory
// timeline as its full 20 Hz trace did, but for single braille dots on
// slopes (a dot column spans parts of seconds whose extremes are kept,
// not every sample between): the same peak row, the same kill and
// limits, and, where a dot column spans a second or more, at most 2% of
// the chart's cells otherwise. (Finer than a second a dot, a short trial
// on a wide screen, more dots differ: within 200 KB a trial-hour a
// second's extremes is the resolution there is.)
func TestTimelineOfACompactedTraceIsTheFullOnes(t *testing.T) {
	for _, c := range []storegen.TraceSpec{
		{Seed: 1, Duration: 10 * time.Minute, Steps: 3, PeakBytes: 900 << 20},
		{Seed: 2, Duration: 30 * time.Minute, Steps: 5, PeakBytes: 900 << 20, LimitBytes: 800 << 20},
		{Seed: 3, Duration: 90 * time.Second, Steps: 2, PeakBytes: 300 << 20},
	} {
		tr := storegen.NewTrial(c, storegen.T0)
		tr.Result.Policy = model.ResourcePolicy{GuaranteeBytes: 256 << 20, HardLimitBytes: c.LimitBytes}
		view := func(samples []event.Sample) *TrialView {
			return &TrialView{Trial: tr.Result.Trial, Samples: samples, Peak: tr.Result.PeakWorkingSetBytes, OOMs: tr.Result.OOMs, Result: &tr.Result}
		}
		kept := store.Compact(tr.Samples, tr.Result, nil)
		for _, size := range [][2]int{{80, 16}, {160, 30}, {260, 50}} {
			full := strings.Split(timeline(themes.Plain().Styles, view(tr.Samples), size[0], size[1]), "\n")
			got := strings.Split(timeline(themes.Plain().Styles, view(kept), size[0], size[1]), "\n")
			if len(full) != len(got) {
				t.Fatalf("%d lines, full trace %d", len(got), len(full))
			}
			top := func(lines []string) int {
				for i, l := range lines {
					if strings.ContainsFunc(l, func(r rune) bool { return r > 0x2800 && r <= 0x28ff }) {
						return i
					}
				}
				return -1
			}
			if top(full) != top(got) {
				t.Errorf("%v at %v: the peak is drawn on row %d, from the full trace on %d", c.Duration, size, top(got), top(full))
			}
			cells, diff := 0, 0
			for i := range full[:len(full)-2] { // the chart, not the strip and legend
				a, b := []rune(full[i]), []rune(got[i])
				cells += len(a)
				for j := range min(len(a), len(b)) {
					if a[j] != b[j] {
						diff++
					}
				}
			}
			dotSpan := tr.Samples[len(tr.Samples)-1].Time.Sub(tr.Samples[0].Time) / time.Duration(2*size[0])
			if dotSpan >= time.Second && diff*50 > cells {
				t.Errorf("%v at %v: %d of %d chart cells differ", c.Duration, size, diff, cells)
			}
			legend := func(lines []string) string {
				l := lines[len(lines)-1]
				return l[strings.Index(l, "limit"):][:min(len(l)-strings.Index(l, "limit"), 70)]
			}
			if c.LimitBytes > 0 && !strings.Contains(got[len(got)-1], "OOM at") || legend(full)[:20] != legend(got)[:20] {
				t.Errorf("%v at %v: legend %q, full trace %q", c.Duration, size, got[len(got)-1], full[len(full)-1])
			}
			t.Logf("%v at %dx%d: %d of %d chart cells differ; %d of %d samples kept", c.Duration, size[0], size[1], diff, cells, len(kept), len(tr.Samples))
		}
	}
}
