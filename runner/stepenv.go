package runner

import "github.com/headroom-eval/headroom/model"

// passEnvValue is a PassEnv entry as NAME=value: the host variable's value
// from secrets, or the entry's default when the host has none (Harbor's
// "${VAR:-default}").
func passEnvValue(entry string, secrets map[string]string) string {
	name, host, def, _ := model.PassEnvDefault(entry)
	if v, ok := secrets[host]; ok {
		return name + "=" + v
	}
	return name + "=" + def
}

// stepUser is who runs a step: its own user, else the task's agent user
// for the agent's steps, else the container's user.
func (t *trialRun) stepUser(phase string, st model.Step) string {
	if st.User == "" && phase == "agent" {
		return t.task.AgentUser
	}
	return st.User
}
