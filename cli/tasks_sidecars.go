package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// showSidecars lists a compose task's other services: what each runs,
// its limits (the ratio applies to the task's container only) and what
// the task's container waits for.
func showSidecars(w io.Writer, t model.Task) {
	if len(t.Sidecars) == 0 {
		return
	}
	fmt.Fprintf(w, "  sidecars (on a private network per trial; the ratio does not apply to them)\n")
	for _, sc := range t.Sidecars {
		what := sc.Image
		if sc.Build != nil {
			what = "built from " + filepath.Join(sc.Build.Context, sc.Build.Dockerfile)
			if sc.Build.Inline != "" {
				what = "built from an inline Dockerfile in " + sc.Build.Context
			}
		}
		limit := "no limit"
		if sc.MemoryLimitBytes > 0 || sc.CPUs > 0 {
			var parts []string
			if sc.MemoryLimitBytes > 0 {
				parts = append(parts, model.FormatBytes(sc.MemoryLimitBytes))
			}
			if sc.CPUs > 0 {
				parts = append(parts, fmt.Sprintf("%g CPU", sc.CPUs))
			}
			limit = "limit " + strings.Join(parts, ", ")
		}
		health := ""
		if sc.Healthcheck != nil {
			health = ", healthcheck"
		}
		fmt.Fprintf(w, "    %-12s %s (%s%s)\n", sc.Name, what, limit, health)
	}
	if len(t.DependsOn) > 0 {
		var deps []string
		for _, d := range t.DependsOn {
			deps = append(deps, d.Service+" "+strings.TrimPrefix(d.Condition, "service_"))
		}
		fmt.Fprintf(w, "  waits for %s\n", strings.Join(deps, ", "))
	}
}
