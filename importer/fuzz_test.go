package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whatever a job's or a trial's result.json or a run's results.json holds, an import
// reads it or says what is wrong in one line per problem; it never panics.
func FuzzImportDirs(f *testing.F) {
	for _, p := range []string{"testdata/harbor/tb2-gke-3x/fix-git__2htza6t/result.json", "testdata/tb1/2026-11-22__10-00-00/results.json",
		"testdata/harbor/older-release/bn-fit-modify__d4e5f6g/result.json", "testdata/tb1/2026-11-23__09-00-00/results.json", "testdata/harbor/older-release/result.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"trial_name":"a","task_name":"b","finished_at":"2026-01-01T00:00:00Z","exception_info":{"exception_type":"NonZeroAgentExitCodeError","exception_message":"Command failed (exit 137): x"}}`))
	f.Add([]byte(`{"results":[{"trial_name":"a","task_id":"b","trial_ended_at":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		job := filepath.Join(dir, "job")
		if err := os.MkdirAll(filepath.Join(job, "trial"), 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(job, "trial", "result.json"), data, 0o644)
		_ = os.WriteFile(filepath.Join(job, "run_metadata.json"), []byte(`{"agent_name":"a"}`), 0o644)
		_ = os.WriteFile(filepath.Join(job, "results.json"), data, 0o644)
		_ = os.WriteFile(filepath.Join(job, "result.json"), data, 0o644)
		for _, read := range []func([]string, Options) (Import, error){Harbor, TerminalBench} {
			if _, err := read([]string{job}, Options{}); err != nil {
				for _, line := range strings.Split(err.Error(), "\n") {
					if line == "" {
						t.Errorf("an empty problem line in %q", err)
					}
				}
			}
		}
	})
}
