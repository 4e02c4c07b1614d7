//go:build hostile

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Round eleven, the tenth attacker's item 2: memory the task holds where
// no process's resident set counts it, here 50 MiB of unix-socket buffers
// behind a 0.5 MB sleep, left the step driver the largest process in a
// container whose engine refuses the driver's -1000 (this machine's). At
// the next allocation the kernel killed the driver: `driver-killed`,
// headroom's own failure, never graded, where --exec-steps (and Harbor,
// whose container's processes are all the task's) took the task's
// process and graded `passed-after-oom`. The driver now raises its steps
// to the kernel's highest score instead (model.StepRaisedOOMScoreAdj).
func TestHostileR11SocketBuffersTakeTheDriver(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/socket-buffers", map[string]string{
		"task.toml":         harborToml("hostile-r11/socket-buffers", 64),
		"solution/solve.sh": "#!/bin/bash\npython3 - <<'PY'\n" + fillSockets + "held += [os.fork()]\nif held[-1] == 0:\n    os.execv('/bin/sleep', ['sleep', '20'])\nPY\npython3 - <<'PY' || echo \"the second filler ended $?\"\n" + fillSockets + "PY\necho done\n",
	}, model.PassedAfterOOM, "", "the task's own process is the kernel's choice, as under --exec-steps: the driver holds no memory of the task's",
		"Harbor task, memory_mb = 64: solve.sh fills 200 socketpairs' buffers (50 MiB), holds them in a forked `sleep`, then fills more; test.sh reward 1; on an engine that refuses the driver's -1000")
}

// fillSockets is Python that fills socketpairs' send buffers until 200
// are full, every socket kept open (and inheritable) in held.
const fillSockets = `import os, socket
held = []
for i in range(200):
    a, b = socket.socketpair()
    a.setblocking(False)
    try:
        while True:
            a.send(b"x" * 65536)
    except BlockingIOError:
        pass
    for s in (a, b):
        os.set_inheritable(s.fileno(), True)
    held += [a, b]
`

// The tenth attacker's item 1: a loop of kills whose memory sits in pipe
// pages (head | tail, 100 MB through a pipe at 32 MiB) took the driver in
// 2 trials of 3 here (driver-killed); --exec-steps passes all three after
// their kills. Three repeats, each must be graded.
func TestHostileR11PipeKillLoop(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	name := "hostile-r11/pipe-kills"
	tasks := filepath.Join(t.TempDir(), "tasks")
	harborTask(t, tasks, "pipe-kills", name, map[string]string{
		"task.toml":         harborToml(name, 32),
		"solution/solve.sh": "#!/bin/bash\nfor i in $(seq 1 40); do head -c 100M /dev/zero | tail -n 1; done\necho done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	res := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "1x", "--repeats", "3", "--out", out)
	_, recs, left := records(t, out)
	forged, said := 0, ""
	for _, r := range recs {
		o, c, _ := oneRecord([]map[string]any{r})
		said += fmt.Sprintf("%s · %s; ", o, orNone(c))
		if o != string(model.PassedAfterOOM) {
			forged++
		}
	}
	if forged > 0 {
		t.Errorf("exit %d: %s want 3 × %s (each kill the task's own, graded)\n%s", res.code, said, model.PassedAfterOOM, res.stderr)
	}
	letoutRow(t, "Harbor task, memory_mb = 32: solve.sh runs `head -c 100M /dev/zero | tail -n 1` 40 times, 3 repeats, on an engine that refuses the driver's -1000",
		fmt.Sprintf("exit %d, %s(%s)", res.code, said, time.Since(start).Round(time.Second)), 3-len(recs), left, forged)
}

// The eleventh attacker's finding 1, against round eleven's first fix: a
// worker that marks itself the kernel's preferred victim (its own
// oom_score_adj 500, as a browser's renderers set 300) sat below its
// coordinator once every step was raised to 1000, so the kernel took the
// coordinator: 3 of 3 oom-killed, where --exec-steps and Harbor (steps at
// 0) take the worker and the coordinator writes the answer. Steps are now
// raised by the least that outranks the driver (workload.stepRaise).
func TestHostileR11WorkerMarksItselfTheVictim(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/self-marked-victim", map[string]string{
		"task.toml": harborToml("hostile-r11/self-marked-victim", 256),
		"solution/solve.sh": "#!/bin/bash\nmkdir -p /app\npython3 - <<'PY'\n" + `import os, time
def hold(mb):
    b = bytearray(mb << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    return b
pid = os.fork()
if pid == 0:
    open('/proc/self/oom_score_adj', 'w').write('500')
    time.sleep(0.5)
    c = []
    while True:
        c.append(hold(8))
base = hold(90)
os.waitpid(pid, 0)
open('/app/answer.txt', 'w').write('42\n')
` + "PY\n",
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nif grep -qx 42 /app/answer.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.PassedAfterOOM, "", "the kernel takes the worker that set itself 500, as under --exec-steps and Harbor, and the coordinator writes the answer",
		"Harbor task, memory_mb = 256: solve.sh's python forks a worker that sets its own oom_score_adj 500 and grows without end, beside a 90 MiB coordinator that writes the answer when the worker dies; test.sh checks the answer")
}

// The eleventh attacker's finding 2: every step ran in the directory the
// step driver held since the start. A solution that removed and made its
// working directory again left the verifier in the removed one (its
// relative `cat answer.txt` failed: 0 of 3 where --exec-steps and Harbor
// pass 3 of 3); one that removed it for good left the verifier running
// where the engine's exec cannot start (Harbor: 126, no reward, failed;
// here it passed). Each step now starts in the container's working
// directory by its path, as an exec does.
func TestHostileR11WorkDirMadeAgain(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/workdir-again", map[string]string{
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nWORKDIR /app\n",
		"solution/solve.sh":      "#!/bin/bash\ncd /\nrm -rf /app\nmkdir /app\necho 42 > /app/answer.txt\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nif [ \"$(cat answer.txt)\" = 42 ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "the verifier starts in the /app the solution made, as an exec does",
		"Harbor task, WORKDIR /app: solve.sh removes /app and makes it again with answer.txt; test.sh reads `answer.txt` relative to its directory")
}

func TestHostileR11WorkDirGone(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/workdir-gone", map[string]string{
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nWORKDIR /app\n",
		"solution/solve.sh":      "#!/bin/bash\ncd / && rm -rf /app\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nif [ ! -e /app ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Failed, "", "the engine's exec cannot start the verifier in a working directory that is gone (126), so it writes no reward, as under Harbor",
		"Harbor task, WORKDIR /app: solve.sh removes /app; test.sh would write reward 1 if /app is gone")
}

// The eleventh attacker's item: a --pass-env secret with a single quote
// in it. The scripts' shell trace quotes it, closing the quote, escaping
// the one in the value and opening again, which exact-match masking
// missed: the value
// reached trials.jsonl, trials.summary, log.txt and the progress line,
// under the step driver and --exec-steps alike. No piece of it may be in
// any file or line.
func TestHostileR11QuotedSecretInTheTrace(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	start := time.Now()
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-r11/quoted-secret"
	harborTask(t, tasks, "quoted-secret", name, map[string]string{
		"task.toml":         harborToml(name, 128) + "[solution.env]\nTOKEN = \"${ATK11_TOKEN}\"\n",
		"solution/solve.sh": "#!/bin/bash\nauth=\"Bearer $TOKEN\"\ncheck(){ test -n \"$1\"; }\ncheck \"$TOKEN\"\necho done\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	said, lost, leaked := secretBothRunners(t, bin, root, tasks, name, "ATK11_TOKEN", "hunter2 pa'ss-SuperSecret9", "hunter2", "SuperSecret9", "pa'\\''ss")
	letoutRow(t, "Harbor task whose [solution.env] TOKEN is a --pass-env secret holding a single quote (\"hunter2 pa'ss-SuperSecret9\"), traced by bash -x as 'hunter2 pa'\\''ss-SuperSecret9'; under the step driver and --exec-steps",
		fmt.Sprintf("%s(%s)", said, time.Since(start).Round(time.Second)), lost, leaked, 0)
}

// secretBothRunners runs task name's oracle under both runners with the
// host's variable env holding secret, passed with --pass-env, and counts
// the pieces of it found in any file of the experiment or line of the
// run's output (an error each): the runs' outcomes, records lost and
// what leaked (leftovers too).
func secretBothRunners(t *testing.T, bin, root, tasks, name, env, secret string, pieces ...string) (said string, lost, leaked int) {
	t.Helper()
	for _, mode := range [][]string{nil, {"--exec-steps"}} {
		out := filepath.Join(root, fmt.Sprint("out", len(mode)))
		args := append([]string{"run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--pass-env", env, "--ratios", "uncapped", "--repeats", "1", "--out", out}, mode...)
		run := runBin(t, bin, []string{env + "=" + secret}, args...)
		_, recs, left := records(t, out)
		lost += 1 - len(recs)
		leaked += left
		if len(recs) == 1 {
			said += fmt.Sprintf("%v%s; ", recs[0]["outcome"], map[bool]string{true: " (--exec-steps)"}[len(mode) > 0])
		}
		for _, piece := range pieces {
			n, where := countIn(piece, experimentFiles(t, out), map[string]string{"run stdout": run.stdout, "run stderr": run.stderr})
			if n > 0 {
				t.Errorf("%v: %q is in %v", mode, piece, where)
			}
			leaked += n
		}
	}
	return said, lost, leaked
}

// The eleventh attacker's finding 3: the trace wrapper took BASH_ENV for
// its own setup and unset the step's, so an image whose ENV BASH_ENV puts
// its tools on PATH (as conda and venv images do for a non-interactive
// bash) failed its verifier, "checktool: command not found", under both
// runners, where Harbor's `bash -c` reads it and passes.
func TestHostileR11ImageBashEnv(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/bash-env", map[string]string{
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nRUN mkdir -p /opt/tools && printf '#!/bin/sh\\necho tool-ok\\n' > /opt/tools/checktool && chmod +x /opt/tools/checktool && printf 'export PATH=/opt/tools:$PATH\\n' > /etc/activate.sh\nENV BASH_ENV=/etc/activate.sh\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\nif [ \"$(checktool)\" = tool-ok ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.Passed, "", "the verifier's bash reads the image's BASH_ENV, as Harbor's does",
		"Harbor task whose image sets ENV BASH_ENV=/etc/activate.sh (putting /opt/tools on PATH); test.sh runs checktool")
}

// The eleventh attacker's finding 4: at the agent's timeout headroom
// stopped every process of the container but its first, the task's own
// environment with the agent's: a server its image's ENTRYPOINT started,
// and the worker that server forked, were gone when the verifier asked
// them (timeout), where Harbor, which cuts only its exec's client, grades
// the verifier's pass. What ran before the first step, and all it
// starts, is left running now; what the agent's steps started is stopped.
func TestHostileR11EntrypointOutlivesTheAgentsTimeout(t *testing.T) {
	oracleVerdictRow(t, "hostile-r11/entrypoint-server", map[string]string{
		"task.toml":              strings.Replace(harborToml("hostile-r11/entrypoint-server", 128), "[agent]\ntimeout_sec = 60.0", "[agent]\ntimeout_sec = 5.0", 1),
		"environment/Dockerfile": "FROM headroom-debian:bookworm\nCOPY entry.sh /entry.sh\nRUN chmod +x /entry.sh\nENTRYPOINT [\"/entry.sh\"]\n",
		// The "server": a master that forks its worker once a step has
		// begun (it waits for the step's mark), as a pre-forking server.
		"environment/entry.sh": "#!/bin/sh\nsh -c 'while [ ! -e /tmp/go ]; do sleep 0.2; done; sleep 1000 & echo $! > /tmp/worker.pid; wait' &\nexec \"$@\"\n",
		"solution/solve.sh":    "#!/bin/bash\ntouch /tmp/go\nsleep 60\n",
		"tests/test.sh":        "#!/bin/bash\nmkdir -p /logs/verifier\nsleep 1\nif kill -0 \"$(cat /tmp/worker.pid)\" 2>/dev/null; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
	}, model.PassedAfterTimeout, "", "the entrypoint's server and its worker outlive the agent's timeout, as under Harbor",
		"Harbor task whose image's ENTRYPOINT starts a server that forks a worker once the agent begins; agent timeout 5 s, solve.sh sleeps 60 s; test.sh passes if the worker lives")
}
