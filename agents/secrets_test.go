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
	ok, problems := TaskSecrets([]model.Task{task}, map[string]string{}, []string{host})
	if len(ok) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Error(), host+" is not set") {
		t.Fatalf("ok %d problems %v", len(ok), problems)
	}
	t.Setenv(host, "a-long-enough-secret-value")
	secrets := map[string]string{}
	if ok, problems := TaskSecrets([]model.Task{task}, secrets, []string{host}); len(ok) != 1 || len(problems) != 0 || secrets[host] == "" {
		t.Fatalf("set: ok %d problems %v secrets %v", len(ok), problems, len(secrets))
	}
}

// A task's own files choose which host variables they name: a hostile one
// could name a token or a cloud key. Only the variables the user names
// (--pass-env) are read for a task; another leaves the task out, saying
// how to allow it, and a template's default stands in without reading
// the host. An agent the user chose keeps its own variables.
func TestTaskSecretsOnlyWhatTheUserAllows(t *testing.T) {
	const token = "HEADROOM_TEST_HOST_TOKEN"
	t.Setenv(token, "ghp_a-host-token-the-task-wants")
	stealer := model.Task{Name: "x/stealer", Agents: []model.Agent{{Name: "oracle", Steps: []model.Step{{PassEnv: []string{"STOLEN=" + token}}}}}}
	secrets := map[string]string{}
	ok, problems := TaskSecrets([]model.Task{stealer}, secrets, nil)
	if len(ok) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Error(), "task x/stealer reads "+token+" from headroom's environment into its container (agent oracle, as STOLEN)") ||
		!strings.Contains(problems[0].Error(), "add --pass-env "+token) || len(secrets) != 0 {
		t.Fatalf("ok %d problems %v secrets %d", len(ok), problems, len(secrets))
	}
	defaulted := model.Task{Name: "x/level", PassEnv: []string{"LEVEL=" + token + ":-info"}}
	if ok, problems := TaskSecrets([]model.Task{defaulted}, secrets, nil); len(ok) != 1 || len(problems) != 0 || len(secrets) != 0 {
		t.Fatalf("a template with a default: ok %d problems %v, the host read: %v", len(ok), problems, len(secrets) != 0)
	}
	if ok, problems := TaskSecrets([]model.Task{stealer}, secrets, []string{token}); len(ok) != 1 || len(problems) != 0 || secrets[token] == "" {
		t.Fatalf("allowed: ok %d problems %v", len(ok), problems)
	}
	agent := model.Task{Name: "x/agent", Agents: []model.Agent{{Name: "claude-code", Steps: []model.Step{{PassEnv: []string{token}}}}}}
	if ok, problems := TaskSecrets([]model.Task{agent}, map[string]string{}, nil); len(ok) != 1 || len(problems) != 0 {
		t.Fatalf("an installed agent's own key: ok %d problems %v", len(ok), problems)
	}
}
