package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// A Harbor multi-step task runs its steps in one container: the oracle
// solves each step in turn (the second step's workdir/ files, setup.sh,
// healthcheck, its own env and tests merged over the shared ones) and
// passes with both steps' rewards; nop fails the first step, whose
// min_reward stops the trial before the second. Nothing is left behind.
func TestMultiStepOraclePassesNopStopsEarly(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTBAgents(t, "multi-step")
	if len(task.Phases) != 2 {
		t.Fatalf("%d phases, want 2", len(task.Phases))
	}
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	r := byAgent(results)
	nop, oracle := r[taskfile.AgentNop], r[taskfile.AgentOracle]
	for _, res := range results {
		for _, s := range res.Steps {
			t.Logf("%s %s: %s exit %s %q", res.Agent, s.Phase, s.Name, s.ExitText(), s.Output)
		}
	}
	if oracle.Outcome != model.Passed || oracle.Reward == nil || *oracle.Reward != 1 {
		t.Errorf("oracle: %s (%s), want passed with reward 1", oracle.Outcome, oracle.Reason)
	}
	if got := model.PhasesSummary(task.PhaseNames(), oracle.Phases); got != "scaffold 1 · implement 1" {
		t.Errorf("oracle phases %q", got)
	}
	var ran []string
	for _, s := range oracle.Steps {
		if s.Phase == "setup" {
			ran = append(ran, s.Name)
		}
	}
	if got := strings.Join(ran, ","); got != "implement/workdir,implement/setup.sh,implement/healthcheck" {
		t.Errorf("oracle setup steps %s", got)
	}
	if nop.Outcome != model.Failed || nop.Reward == nil || *nop.Reward != 0 {
		t.Errorf("nop: %s (%s), want failed with reward 0", nop.Outcome, nop.Reason)
	}
	if len(nop.Phases) != 1 || !strings.Contains(nop.Phases[0].Stopped, "below min_reward 1") {
		t.Errorf("nop phases %+v, want scaffold only, stopped by min_reward", nop.Phases)
	}
	if !strings.Contains(nop.Reason, "implement not run") {
		t.Errorf("nop reason %q does not say the second step did not run", nop.Reason)
	}
	for _, s := range nop.Steps {
		if strings.HasPrefix(s.Name, "implement/") {
			t.Errorf("nop ran %s after the early stop", s.Name)
		}
	}
	left, err := testCli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runner.LabelTask+"="+task.Name))})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d container(s) left behind", len(left))
	}
}

// A step's agent that runs past its time limit: its processes are
// stopped, the step is verified all the same and the trial goes on to
// the next step, as Harbor's multi-step trial does (before, the timeout
// ended the whole trial: the container was killed with the step).
func TestMultiStepAgentTimeoutVerifiesAndGoesOn(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTBAgents(t, "multi-step")
	oracle, _ := task.Agent(taskfile.AgentOracle)
	slow := model.Agent{Name: "slow-scaffold"}
	for _, st := range oracle.Steps {
		if st.Phase == "scaffold" {
			// Does the work, then stays past the step's time limit.
			st.Argv = []string{"bash", "-c", "bash " + taskfile.SolutionDir + "/solve.sh && sleep 300"}
			st.Trace = false
		}
		slow.Steps = append(slow.Steps, st)
	}
	task.Agents = []model.Agent{slow}
	task.Phases[0].AgentTimeout = 3 * time.Second
	results, _ := sweep(t, newBackend(t, Options{}), []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	r := results[0]
	for _, s := range r.Steps {
		t.Logf("%s: %s exit %s timed out %v", s.Phase, s.Name, s.ExitText(), s.TimedOut)
	}
	t.Logf("%s: %s", r.Outcome, r.Reason)
	if len(r.Phases) != 2 || !r.Phases[0].AgentTimedOut || r.Phases[0].Rewards == nil {
		t.Fatalf("phases %+v, want scaffold timed out and verified, then implement", r.Phases)
	}
	if r.Outcome != model.PassedAfterTimeout || r.Reward == nil || *r.Reward != 1 || !strings.Contains(r.Reason, "the agent ran past its time limit (3s) in step scaffold/solve") {
		t.Errorf("%s reward %v (%s), want passed after a timeout: both steps verified with reward 1, the scaffold's 3 s limit named", r.Outcome, r.Reward, r.Reason)
	}
	if got := model.PhasesSummary(task.PhaseNames(), r.Phases); got != "scaffold 1 (agent timed out) · implement 1" {
		t.Errorf("phases %q", got)
	}
}
