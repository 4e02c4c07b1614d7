package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// EditMemory keeps the file's own form, indentation and other lines, and
// only touches [environment].
func TestMemoryEditKeepsTheFile(t *testing.T) {
	const body = "[verifier]\nworkload = { duration_ms = 10 }\n[[agents]]\nname = \"agent\"\n  [[agents.steps]]\n  name = \"s\"\n  workload = { duration_ms = 10 }\n"
	c := model.Calibration{Task: "cli/x", SpecBytes: 32 * model.MiB, GuaranteeBytes: 40 * model.MiB, LimitBytes: 64 * model.MiB, MedianBytes: 38 * model.MiB}
	note := "  # headroom calibrate E: guarantee (median need 38MiB)"
	limit := "\nmemory_limit = \"64M\"  # headroom calibrate E: the 1x hard limit, raised from 32MiB"
	tests := []struct{ name, in, want string }{
		{"memory string, user comment kept",
			"# mine\n[task]\nname = \"cli/x\"\n[environment]\nimage = \"builtin\"\n  memory   = \"32M\"   # tuned by hand\n" + body,
			"# mine\n[task]\nname = \"cli/x\"\n[environment]" + limit + "\nimage = \"builtin\"\n  memory   = \"40M\"   # tuned by hand\n" + body},
		{"no memory key: added under [environment]",
			"[task]\nname = \"cli/x\"\n[environment]\nimage = \"builtin\"\n" + body,
			"[task]\nname = \"cli/x\"\n[environment]" + limit + "\nmemory = \"40M\"" + note + "\nimage = \"builtin\"\n" + body},
		{"a previous calibration's note is replaced",
			"[task]\nname = \"cli/x\"\n[environment]\nimage = \"builtin\"\nmemory = \"36M\"  # headroom calibrate OLD: guarantee; recommended hard limit 48M\nmemory_limit = \"48M\"  # headroom calibrate OLD: the 1x hard limit\n" + body,
			"[task]\nname = \"cli/x\"\n[environment]\nimage = \"builtin\"\nmemory = \"40M\"" + note + "\n" + strings.TrimPrefix(limit, "\n") + "\n" + body},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "x.toml")
		if err := os.WriteFile(path, []byte(tt.in), 0o600); err != nil {
			t.Fatal(err)
		}
		e, err := EditMemory(path, model.FormatHeadroom, c, "E")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(e.Data) != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, e.Data, tt.want)
		}
		if err := e.Write(); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want the file's own 0600", tt.name, st.Mode().Perm())
		}
	}
	if _, err := EditMemory("builtin:x.toml", model.FormatHeadroom, c, "E"); err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("built-in: %v", err)
	}
}

// The comment --write leaves says how many runs its median stands on when
// some were censored (the table's figures: report's
// TestCalibrationSaysWhatWasCensored). Seen: a median of 212MiB written
// into the file from runs cut off by their time limit.
func TestMedianNoteSaysWhatWasCensored(t *testing.T) {
	pol := model.NewPolicy(model.Resources{CPUs: 1, MemoryBytes: 320 * model.MiB}, model.Uncapped, 2)
	var trials []model.TrialResult
	for i, mib := range []int64{200, 210, 220, 230, 240, 250, 260, 270, 280, 290, 300, 250} {
		tr := model.TrialResult{Trial: model.Trial{Task: "numpy", Agent: "oracle", Ratio: model.Uncapped, Repeat: i + 1, Policy: pol}, Outcome: model.Passed, PeakWorkingSetBytes: mib * model.MiB}
		if i == 11 {
			tr.Outcome = model.Timeout
		}
		trials = append(trials, tr)
	}
	cals := model.Calibrate(trials, map[string]int64{"numpy": 320 * model.MiB}, nil, 0.1, 0.1)
	if got := medianNote(cals[0]); !strings.Contains(got, "(Kaplan–Meier, 1 of 12 runs censored)") {
		t.Errorf("--write's median note %q says nothing of the censored run", got)
	}
}
