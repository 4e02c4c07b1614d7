package report

import (
	"fmt"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// importedLines say, for an experiment read from another harness's
// runs, where each ratio came from and what those runs do not record
// (so what this report cannot say of them); nil otherwise.
func (r *Report) importedLines() []string {
	if r.Manifest == nil || len(r.Manifest.Imported) == 0 {
		return nil
	}
	out := []string{"Imported (headroom import), not run here:"}
	var unknown []string
	for _, s := range r.Manifest.Imported {
		out = append(out, fmt.Sprintf("  %s  %s from %s %s (%s)", s.Ratio, model.Quantity(s.Trials, "trial"), s.Harness, s.Dir, s.Settings))
		unknown = s.Unknown
	}
	if len(unknown) > 0 {
		out = append(out, "  not recorded by the harness, so not in this report: "+strings.Join(unknown, ", "))
	}
	return out
}
