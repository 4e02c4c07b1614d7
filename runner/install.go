package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// install runs an installed agent's install steps under their own time
// limit, in the install phase, so their time and memory are reported
// apart from the agent's solving. It says whether the agent may start
// (if not, t.unverified says why); the error is the engine's.
func (t *trialRun) install(ctx context.Context, sb Sandbox, agent model.Agent, env []string, ev *model.Evidence) (bool, error) {
	if len(agent.Install) == 0 {
		return true, nil
	}
	timeout := agent.InstallTimeout
	if timeout <= 0 {
		timeout = t.task.AgentTimeout
	}
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, st := range agent.Install {
		sr, err := t.runStep(ictx, sb, model.PhaseInstall, st, env)
		if sr.TimedOut {
			ev.TimedOut, t.agentLimit = true, timeout
		}
		if err != nil {
			return false, fmt.Errorf("install step %s: %w", st.Name, err)
		}
		if ctx.Err() != nil {
			return false, nil
		}
		if sr.ExitCode != 0 || sr.TimedOut {
			// Harbor's trial ends when its agent's setup fails, before
			// the agent and its verifier: no reward.
			how := fmt.Sprintf("exited %d", sr.ExitCode)
			if sr.TimedOut {
				how = fmt.Sprintf("ran past the install's time limit (%s)", timeout)
			}
			t.unverified = fmt.Sprintf("the agent's install step %s %s, so neither the agent nor the verifier ran (Harbor ends a trial whose agent setup fails, with no reward)", st.Name, how)
			return false, nil
		}
	}
	return true, nil
}

// agentTimeout is the agent's own time limit, else the task's.
func (t *trialRun) agentTimeout(agent model.Agent) time.Duration {
	if agent.Timeout > 0 {
		return agent.Timeout
	}
	return t.task.AgentTimeout
}
