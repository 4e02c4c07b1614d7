package report

import (
	"fmt"
	"io"

	"github.com/headroom-eval/headroom/model"
)

// Regimes is the change between each pair of adjacent ratios, split into
// the paper's two regimes (model.SplitRegimes).
func (r *Report) Regimes() []model.RegimeSplit { return model.AdjacentRegimes(r.Trials, r.seeded()) }

// RegimesLegend says what the split's columns mean.
const RegimesLegend = "rescued: the machine failed it (killed or stalled at the limit, at it when time ran out, timed out on a contended host, pressure from outside, any infra cause) at the tighter ratio, it passed at the looser one; made easier: it failed cleanly (the model's own failure) and passed with the room; regressed: passed, then not. Paired by task, agent and repeat only where the task replays a repeat (seeded, or a recorded session replayed); [lo–hi%] Wilson 95% over the pairs. A task that draws its need each run is compared unpaired (its repeat is another draw at each ratio): each side's machine's and clean failures by rate."

// writeRegimes writes the split between adjacent ratios, as a table or as
// markdown; nothing with fewer than two ratios.
func (r *Report) writeRegimes(w io.Writer, md bool) error {
	splits := r.Regimes()
	if len(splits) == 0 {
		return nil
	}
	const title = "Rescued or made easier: what each step up in room changed, paired by trial where trials replay"
	if md {
		fmt.Fprintf(w, "\n## %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s:\n", title)
	}
	head := []string{"from → to", "pairs", "score change", "rescued (infra → pass)", "made easier (clean failure → pass)", "regressed (pass → fail)"}
	var rows [][]string
	for _, s := range splits {
		cell := func(n int, iv model.Interval) string { return fmt.Sprintf("%d %s", n, ci(iv)) }
		if s.Pairs > 0 {
			rows = append(rows, []string{s.From + " → " + s.To, fmt.Sprint(s.Pairs), pp(s.PairedChange()),
				cell(s.Rescued, s.RescuedCI), cell(s.Easier, s.EasierCI), cell(s.Regressed, s.RegressedCI)})
		}
		if u := s.Unpaired; u != nil {
			rate := func(from, to int) string {
				return fmt.Sprintf("%d/%d → %d/%d failed", from, u.From.Runs, to, u.To.Runs)
			}
			rows = append(rows, []string{s.From + " → " + s.To + " (unpaired: not replayed from a seed)", fmt.Sprintf("%d · %d runs", u.From.Runs, u.To.Runs), pp(u.Change()),
				rate(u.From.Machine, u.To.Machine), rate(u.From.Clean, u.To.Clean), "-"})
		}
	}
	if err := writeGrid(w, md, head, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s\n", RegimesLegend)
	return err
}
