//go:build hostile

package e2e

import (
	"fmt"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round seventeen, the eighteenth attacker's 2: Harbor runs its oracle as
// `set -o pipefail; bash solve.sh 2>&1 | tee /logs/agent/oracle.txt`, so
// the oracle lasts until the tee's input is let go: a job solve.sh left
// in the background with its output open is waited for. The step driver
// ended the step 300 ms after solve.sh, and a result the job wrote two
// seconds later was missing when the verifier looked (failed; Harbor
// passes), under both runners.
func TestHostileR17OracleWaitsForItsBackgroundJob(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/oracle-bg-job", map[string]string{
		"solution/solve.sh": "#!/bin/bash\n( sleep 2; echo 42 > /root/answer.txt; echo wrote ) &\necho started\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" +
			`if [ "$(cat /root/answer.txt 2>/dev/null)" = 42 ] && grep -qx wrote /logs/agent/oracle.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.Passed, "", "Harbor's tee waits for the job: answer.txt is 42 and oracle.txt has its `wrote`",
		"Harbor task: solve.sh leaves `( sleep 2; echo 42 > /root/answer.txt; echo wrote ) &` and echoes started; test.sh checks both")
}

// (b) The same for a job run as the task's agent user (nobody): the step
// driver, root without CAP_SYS_PTRACE, reads that job's descriptors as
// their owner (headroom, root on the host, reads them for --exec-steps).
func TestHostileR17OracleWaitsForAnotherUsersJob(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/oracle-bg-job-user", map[string]string{
		"task.toml":         agentTask("hostile-r17/oracle-bg-job-user", 120, `user = "nobody"`),
		"solution/solve.sh": "#!/bin/bash\n( sleep 2; echo 42 > /tmp/answer.txt ) &\necho started\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" +
			`if [ "$(cat /tmp/answer.txt 2>/dev/null)" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.Passed, "", "Harbor's tee waits for the job, whoever runs it",
		"Harbor task, [agent] user = nobody: solve.sh leaves `( sleep 2; echo 42 > /tmp/answer.txt ) &`")
}

// (c) A job that never lets go of the output (a server started with
// `cmd &`) holds Harbor's oracle to the agent's timeout; Harbor then
// cancels its exec, leaves the server running, and its verifier passes:
// passed after a timeout. headroom, which ended the oracle at once, said
// passed; holding it and then stopping the step's processes, as headroom
// stops a timed-out step, would have failed it.
func TestHostileR17OracleHeldToItsTimeoutLeavesTheJob(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/oracle-held-timeout", map[string]string{
		"task.toml":         agentTask("hostile-r17/oracle-held-timeout", 5, ""),
		"solution/solve.sh": "#!/bin/bash\nsleep 600 &\necho $! > /root/server.pid\necho started\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" +
			`if kill -0 "$(cat /root/server.pid)"; then echo 1; else echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.PassedAfterTimeout, "", "Harbor's oracle times out on the job holding its tee, which runs on: the verifier finds it",
		"Harbor task, agent timeout 5 s: solve.sh leaves `sleep 600 &` (its output open) and writes its pid; test.sh checks it runs")
}

// The nineteenth attacker's 2: a server solve.sh leaves running that
// logs each request to the output it was given. Under --exec-steps (and
// for every image with an entrypoint of its own) headroom closed the
// exec's stream at the step's end, and the server's next line was EPIPE:
// it died as the verifier asked it, where under Harbor it answers. Here
// the server is a loop that writes a line every 0.2 s.
func TestHostileR17JobWritesOnPastItsStep(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/job-writes-on", map[string]string{
		"task.toml":         agentTask("hostile-r17/job-writes-on", 4, ""),
		"solution/solve.sh": "#!/bin/bash\n( while sleep 0.2; do echo tick; done ) &\necho $! > /root/server.pid\necho started\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nsleep 1\n" +
			`if kill -0 "$(cat /root/server.pid)"; then echo 1; else echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.PassedAfterTimeout, "", "Harbor's oracle times out on the loop holding its tee, which writes on: the verifier finds it running",
		"Harbor task, agent timeout 4 s: solve.sh leaves a loop echoing tick every 0.2 s into its output; test.sh checks it still runs a second into the verifier")
}

// agentTask is a Harbor task.toml with the agent's timeout and more lines
// of its [agent] table.
func agentTask(name string, timeout int, agent string) string {
	return fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = %d.0\n%s\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name, timeout, agent)
}

// The nineteenth attacker's 1 (medium-high): a compose file whose main
// service sets MODE in environment: and reads an env_file that sets it
// too. Compose gives environment: the higher precedence whatever the
// order of the keys, and reads the file in its dotenv format (a comment
// after a value is not the value); headroom let the file's line override
// it and kept `fast # comment` whole.
func TestHostileR17EnvFileUnderEnvironment(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/env-file", map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    environment:\n      MODE: override\n    env_file: task.env\n",
		"environment/task.env":            "MODE=default\nSPEED=fast # how fast\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" +
			`if [ "$MODE" = override ] && [ "$SPEED" = fast ]; then echo 1; else echo "MODE=[$MODE] SPEED=[$SPEED]" >&2; echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.Passed, "", "compose: environment: over env_file, and `fast # how fast` is fast",
		"Harbor task: compose main sets MODE=override in environment: and env_file task.env (MODE=default, SPEED=fast # how fast); test.sh checks both")
}

// The nineteenth attacker's 3: an image whose /tests is a link to a
// directory (`ln -s /app/tests /tests`). Harbor's `docker compose cp
// tests/. main:/tests` copies into the link's target; headroom's archive
// put a directory where the link was, the engine refused it, and every
// trial failed, blamed on the agent ("the task's own processes
// interfered").
func TestHostileR17TestsDirIsALink(t *testing.T) {
	bothRunnersRow(t, "hostile-r17/tests-link", map[string]string{
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN mkdir -p /app/tests /app/sol && ln -s /app/tests /tests && ln -s /app/sol /solution\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n" +
			`if [ -L /tests ] && [ -f /app/tests/test.sh ] && [ -f /app/sol/solve.sh ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt` + "\n",
	}, model.Passed, "", "docker cp copies into the links' targets: /app/tests/test.sh and /app/sol/solve.sh",
		"Harbor task: the image links /tests to /app/tests and /solution to /app/sol; test.sh checks the files landed there")
}
