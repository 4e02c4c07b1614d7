package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// memoryEdit keeps the file's own form, indentation and other lines, and
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
		e, err := memoryEdit(path, model.FormatHeadroom, c, "E")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if string(e.data) != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, e.data, tt.want)
		}
		if err := e.write(); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want the file's own 0600", tt.name, st.Mode().Perm())
		}
	}
	if _, err := memoryEdit("builtin:x.toml", model.FormatHeadroom, c, "E"); err == nil || !strings.Contains(err.Error(), "built-in") {
		t.Errorf("built-in: %v", err)
	}
}

func TestPercentKeepsPrecision(t *testing.T) {
	for in, want := range map[float64]string{0.001: "0.1%", 0.01: "1%", 0.1: "10%", 0.125: "12.5%", 0: "0%"} {
		if got := percent(in); got != want {
			t.Errorf("percent(%v) = %q, want %q", in, got, want)
		}
	}
}

// The CPU table shows the uncapped column only where uncapped steps were
// read (it showed "uncapped busiest step" and "-" with no uncapped run).
func TestCPUTableHidesAnEmptyUncappedColumn(t *testing.T) {
	var b strings.Builder
	writeCPUCalibration(&b, []model.CPUCalibration{{Task: "t", SpecCPUs: 1, Verdict: "keep", CPUs: 1, Read: 3,
		Throttled: []model.RatioThrottle{{Ratio: model.Ratio{K: 1}, LimitCPUs: 1, Trials: 3, Passed: 3}}}})
	if strings.Contains(b.String(), "uncapped busiest") {
		t.Errorf("uncapped column with no uncapped run:\n%s", b.String())
	}
	b.Reset()
	writeCPUCalibration(&b, []model.CPUCalibration{{Task: "t", SpecCPUs: 1, Verdict: "keep", CPUs: 1, Read: 3, NeedCores: []float64{0.5}}})
	if !strings.Contains(b.String(), "uncapped busiest step") || !strings.Contains(b.String(), "0.50–0.50 cores") {
		t.Errorf("uncapped column missing:\n%s", b.String())
	}
}

// Every figure that stands on censored runs says how many: the table's
// runs and median, and the comment --write leaves. Seen: a median of
// 212MiB written into the file from runs cut off by their time limit.
func TestCalibrationSaysWhatWasCensored(t *testing.T) {
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
	var b strings.Builder
	writeCalibration(&b, "E", cals, 0.1, 0.1)
	for _, want := range []string{"12 (1 censored: 1 cut off by their time limit (need ≥ the peak reached, up to 250MiB))", "[1 of 12 censored]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	if got := medianNote(cals[0]); !strings.Contains(got, "(Kaplan–Meier, 1 of 12 runs censored)") {
		t.Errorf("--write's median note %q says nothing of the censored run", got)
	}
}
