package agents

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A variable a later step's verifier passes through (Harbor's
// [steps.verifier.env] KEY = "${KEY}") is read like any other: unset, the
// task is left out, named.
func TestTaskSecretsOfAStepVerifier(t *testing.T) {
	const host = "HEADROOM_TEST_STEP_SECRET"
	task := model.Task{Name: "x/steps", Phases: []model.Phase{{Name: "one"}, {Name: "two", Verifier: model.Step{PassEnv: []string{"KEY=" + host}}}}}
	t.Setenv(host, "")
	ok, problems := TaskSecrets([]model.Task{task}, map[string]string{})
	if len(ok) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Error(), host+" is not set") {
		t.Fatalf("ok %d problems %v", len(ok), problems)
	}
	t.Setenv(host, "a-long-enough-secret-value")
	secrets := map[string]string{}
	if ok, problems := TaskSecrets([]model.Task{task}, secrets); len(ok) != 1 || len(problems) != 0 || secrets[host] == "" {
		t.Fatalf("set: ok %d problems %v secrets %v", len(ok), problems, len(secrets))
	}
}
