package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// install runs an installed agent's install steps under their own time
// limit, in the install phase, so their time and memory are reported
// apart from the agent's solving. It says whether the agent may start;
// the error is the engine's.
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
			ev.TimedOut = true
		}
		if err != nil {
			return false, fmt.Errorf("install step %s: %w", st.Name, err)
		}
		if sr.ExitCode != 0 || sr.TimedOut || ctx.Err() != nil {
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
