package report

import (
	"fmt"

	"github.com/headroom-eval/headroom/model"
)

// gradingLines say, for an experiment whose records were made before
// headroom graded a timed-out agent's work, how many of its timeouts
// their harness would have verified (model.TrialResult.UngradedTimeout);
// nil when none.
func (r *Report) gradingLines() []string {
	n := 0
	for _, t := range r.Trials {
		if t.UngradedTimeout() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Graded before the harness's rule: %s recorded as agent timeouts without running the verifier (this experiment's headroom did not yet grade a timed-out agent's work). Harbor and terminal-bench run the verifier after an agent timeout and count its reward, so some may be passes by their harness: rerun the experiment to grade them (docs/PARITY.md, \"Grading\").", model.Quantity(n, "trial"))}
}
