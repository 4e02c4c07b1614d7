//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Round four, item 6: a Harbor image whose ENTRYPOINT starts a background
// job before any step (the task's environment: a service, a cache warmer)
// that grows, once the agent's step runs, until the kernel kills it at
// the container's limit. Steps then go by the engine's exec (the image's
// ENTRYPOINT stays, as in the task's harness), so the entrypoint and its
// children are the container's own processes. The kill was charged to
// the agent's step as if the step had made it ("first in step sleep 8");
// the record must say the process was the environment's, started before
// any step by the container's entrypoint, and the step must count its
// memory as not its own. The trial still OOM-died under its limit: the
// cause stays own-limit (the environment is the task's, inside the limit
// the ratio sets), only the blame moves.
func TestHostileR4EntrypointOOM(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r4/entryhog"
	// The hog waits for the agent's `sleep 8` (no file of the agent's, no
	// word from it: it reads /proc), then grows 16 MiB every 0.2 s.
	hog := `import os, time
open("/tmp/hog.started", "w").close()
def agent():
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if open("/proc/%s/cmdline" % p, "rb").read() == b"sleep\x008\x00":
                    return True
            except OSError:
                pass
    return False
while not agent():
    time.sleep(0.1)
held = []
while True:
    held.append(bytearray(b"x") * (16 << 20))
    time.sleep(0.2)
`
	harborTask(t, tasks, "entryhog", name, map[string]string{
		// The task's healthcheck passes once the hog runs, so that the
		// agent's first step begins after it (headroom waits for it): on
		// a loaded host the entrypoint's shell could fork the hog after
		// the step had begun, which made it the step's (the CI rehearsal
		// of 2026-12-07, once in the parallel hostile suite; 2 of 2
		// alone passed).
		"task.toml":              harborToml(name, 128) + "[environment.healthcheck]\ncommand = \"test -e /tmp/hog.started\"\ninterval_sec = 0.2\nretries = 150\n",
		"environment/hog.py":     hog,
		"environment/start.sh":   "#!/bin/sh\npython3 /hog.py &\nexec \"$@\"\n",
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nCOPY hog.py start.sh /\nENTRYPOINT [\"/start.sh\"]\n",
		"solution/solve.sh":      "#!/bin/bash\nsleep 8\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-r4/entryhog") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	_, recs, leaked := records(t, out)
	lost, forged := 1-len(recs), 0
	said := "no record"
	// The live lines say it as the record does: the kill's line, or the
	// kernel's word on it where a faster source said the kill first.
	// The live lines are on stderr (stdout holds the matrix, whose legend
	// names "an OOM kill" too).
	live := firstLineWith(run.stderr, "OOM ")
	if named := firstLineWith(run.stderr, ": the kernel killed "); !strings.Contains(live, "python3 /hog.py") {
		live = named
	}
	if !strings.Contains(live, "python3 /hog.py") || !strings.Contains(live, "a process started by the container's entrypoint") {
		t.Errorf("the live OOM line %q: want the hog named the entrypoint's", live)
		forged++
	}
	for _, r := range recs {
		reason, _ := r["reason"].(string)
		kill := "none"
		entry := false
		if ooms, _ := r["ooms"].([]any); len(ooms) > 0 {
			o, _ := ooms[0].(map[string]any)
			entry, _ = o["entrypoint"].(bool)
			kill = fmt.Sprintf("%v in step %v, entrypoint %v, started_in_step %v", o["command"], o["step"], o["entrypoint"], o["started_in_step"])
			if !entry || o["started_in_step"] != nil || !strings.HasPrefix(fmt.Sprint(o["command"]), "python3 /hog.py") {
				t.Errorf("the kill %s: want python3 /hog.py, entrypoint true, no started_in_step", kill)
				forged++
			}
		} else {
			t.Errorf("no OOM kill recorded: the hog at 128 MiB must be killed")
			forged++
		}
		leftover := "none"
		for _, s := range steps(r) {
			if s["name"] == "sleep 8" {
				leftover = fmt.Sprintf("%v B from %v", s["leftover_rss_bytes"], s["leftover_from"])
				n, _ := s["leftover_rss_bytes"].(float64)
				if from, _ := s["leftover_from"].(string); n < 64<<20 || !strings.Contains(from, "python3 /hog.py (started by the container's entrypoint)") {
					t.Errorf("the agent's step sleep 8 counts %s as not its own, want the hog's ≥ 64 MiB, named the entrypoint's", leftover)
					forged++
				}
			}
		}
		said = fmt.Sprintf("%s %v %s; the kill: %s; the agent's step: leftover %s; live: %q", r["outcome"], r["cause"], reason, kill, leftover, strings.TrimSpace(live))
		if r["outcome"] != "passed-after-oom" || r["cause"] != "own-limit" || !strings.Contains(reason, "was started by the container's entrypoint: the task's environment, not this step's own") {
			t.Errorf("%s: want passed-after-oom own-limit, the kill named the environment's", said)
			forged++
		}
	}
	letoutRow(t, "a Harbor image's ENTRYPOINT /start.sh starts `python3 /hog.py &` (waits for the agent's `sleep 8`, then +16 MiB / 0.2 s) at 128 MiB; solve.sh `sleep 8`; reward 1", said, lost, leaked, forged)
	t.Logf("row took %s", time.Since(start).Round(100*time.Millisecond))
}
