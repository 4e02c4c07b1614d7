//go:build hostile

package e2e

import (
	"fmt"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
)

// Round nineteen, the twenty-second attacker's 1 (high): the trial's log
// directories became volumes named <trial>-logs1..3, and a compose volume
// was named <trial>-<its name>: a compose volume called logs1 was the
// trial's own /logs/verifier, and a sidecar writing 1 there every 0.1 s
// turned the verifier's 0 into a pass. Under Harbor the compose volume
// is the project's own and /logs/verifier a bind mount: failed.
func TestHostileR19ComposeVolumeNamedLikeTheLogs(t *testing.T) {
	bothRunnersRow(t, "hostile-r19/volume-logs1", map[string]string{
		"environment/docker-compose.yaml": "services:\n  main:\n    volumes: [\"logs2:/scratch\"]\n  writer:\n    image: " + docker.DebianImage +
			"\n    command: [\"sh\", \"-c\", \"while true; do echo 1 > /v/reward.txt; sleep 0.1; done\"]\n    volumes: [\"logs1:/v\"]\nvolumes:\n  logs1: {}\n  logs2: {}\n",
		"tests/test.sh": "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\nsleep 1\ncat /logs/verifier/reward.txt\n",
	}, model.Failed, "reward 0", "the compose volume logs1 is not the trial's /logs/verifier: the verifier's 0 stands",
		"Harbor task: compose volumes logs1 and logs2, a sidecar writing 1 to logs1's reward.txt every 0.1 s; test.sh writes reward 0")
}

// The twenty-second attacker's 2: a separate verifier's container is the
// trial's name and -verifier; a compose service called verifier took that
// name (its container was <trial>-verifier), and the trial was recorded
// engine-lost. Under Harbor the verifier is another compose project.
func TestHostileR19ServiceNamedVerifier(t *testing.T) {
	name := "hostile-r19/service-verifier"
	bothRunnersRow(t, name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.3\"\n[task]\nname = %q\n[agent]\ntimeout_sec = 60.0\n"+
			"[verifier]\nenvironment_mode = \"separate\"\ntimeout_sec = 60.0\n[verifier.environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n"+
			"[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
		"environment/docker-compose.yaml": "services:\n  verifier:\n    image: " + docker.DebianImage + "\n    command: [\"sleep\", \"infinity\"]\n" +
			"  main:\n    volumes: [\"verifier-logs1:/cache\"]\nvolumes:\n  verifier-logs1: {}\n",
		"tests/Dockerfile": "FROM " + docker.DebianImage + "\nCOPY test.sh /tests/test.sh\nRUN chmod +x /tests/test.sh\n",
		"tests/test.sh":    "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "the compose service verifier and volume verifier-logs1 are the task's, not the separate verifier's container and volume",
		"Harbor task, separate verifier: a compose service named verifier and a compose volume named verifier-logs1")
}

// The twenty-second attacker's 3: the allowlist's helper container is the
// trial's name and -netpolicy-1; a compose service of that name made the
// trial an infra error ("allowed_hosts cannot be enforced: … Conflict").
func TestHostileR19ServiceNamedLikeTheNetpolicyHelper(t *testing.T) {
	name := "hostile-r19/service-netpolicy"
	bothRunnersRow(t, name, map[string]string{
		"task.toml": fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n"+
			"[environment]\ncpus = 1\nmemory_mb = 128\nnetwork_mode = \"allowlist\"\nallowed_hosts = [\"192.0.2.1\"]\n", name),
		"environment/docker-compose.yaml": "services:\n  netpolicy-1:\n    image: " + docker.DebianImage + "\n    command: [\"sleep\", \"infinity\"]\n",
	}, model.Passed, "", "a compose service called netpolicy-1 is the task's, not headroom's allowlist helper",
		"Harbor task, allowlist network: a compose service named netpolicy-1")
}
