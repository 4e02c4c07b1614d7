package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// The manifest records each task's container profile and how it differs
// from the task's own harness; the reproduce command follows the
// profile's pids limit.
func TestTaskEntryRecordsProfileAndDeviations(t *testing.T) {
	task := model.Task{Name: "x/y", Format: model.FormatHarbor, Resources: model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB, Defaulted: []string{"pids_limit"}},
		Capabilities: append([]string(nil), model.DefaultCapabilities...), Deviations: []model.Deviation{{What: "allowed_hosts not enforced"}}}
	task.SetProfile(model.ProfileHarbor)
	pids := func(_ model.Task, _ string, p model.ResourcePolicy) string {
		return fmt.Sprintf("--pids-limit=%d", p.PidsLimit)
	}
	e := NewScaledTaskEntry(task, []model.Ratio{{K: 1}}, 2, model.ScaleBoth, pids)
	// The file's deviation.
	if e.Profile != model.ProfileHarbor || len(e.Deviations) != 1 || e.Reproduce["1x"] != "--pids-limit=0" {
		t.Errorf("harbor: profile %q deviations %v flags %v", e.Profile, e.Deviations, e.Reproduce["1x"])
	}
	task.SetProfile(model.ProfileHardened)
	e = NewScaledTaskEntry(task, []model.Ratio{{K: 1}}, 2, model.ScaleBoth, pids)
	data, _ := json.Marshal(e)
	for _, want := range []string{`"profile":"hardened"`, `"what":"hardened profile: capabilities dropped"`, `"--pids-limit=1024"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("hardened entry lacks %s:\n%s", want, data)
		}
	}
}
