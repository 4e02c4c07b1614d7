//go:build hostile

package e2e

// The hostile-input suite's "let in, or let out" rows (issue #24, items
// 10–15): each injects for real — the real binary, the real engine, real
// files, links and processes — and reports what headroom recorded and
// what was lost, leaked or forged, each of which must be 0.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/session"
)

// letoutRow reports one row of the hostile-input table and fails the
// test unless nothing was lost, leaked or forged.
func letoutRow(t *testing.T, input, recorded string, lost, leaked, forged int) {
	t.Helper()
	row := fmt.Sprintf("| %s | %s | %d | %d | %d |", input, recorded, lost, leaked, forged)
	fmt.Println(row)
	t.Log(row)
	if lost != 0 || leaked != 0 || forged != 0 {
		t.Errorf("%s: lost %d, leaked %d, forged %d; want 0 each", input, lost, leaked, forged)
	}
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
	maxRSSKiB      int64
	cpu            time.Duration // the binary's user and system CPU
}

func runBin(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKiB = ru.Maxrss
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r
}

// harborTask writes a Terminal-Bench 2.0 / Harbor task directory under
// root: task.toml named name, an instruction, environment/Dockerfile
// FROM the real-task Debian image, a solution and a verifier that passes;
// files (relative path → content) are added or replace those.
func harborTask(t *testing.T, root, dir, name string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(root, dir)
	all := map[string]string{
		"task.toml":      fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[verifier]\ntimeout_sec = 120.0\n[agent]\ntimeout_sec = 120.0\n[environment]\ncpus = 1\nmemory_mb = 128\nallow_internet = false\n", name),
		"instruction.md": "Do the task.\n",
		// A layer of the task's own: two rows' builds of the same text
		// shared the classic builder's cached image, and one row's
		// cleanup removed it under the other's build ("No such image").
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nLABEL headroom.test.row=" + strconv.Quote(name) + "\n",
		"solution/solve.sh":      "#!/bin/bash\necho solved\n",
		"tests/test.sh":          "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
	}
	for k, v := range files {
		all[k] = v
	}
	writeFiles(t, d, all)
	return d
}

// writeFiles writes each file (by its path under dir), executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// needEngine skips (fails in CI) without tmux where asked, the engine, or
// the real-task Debian image the task directories build from.
func needEngine(t *testing.T) {
	t.Helper()
	need(t, "docker engine", exec.Command("docker", "info"))
	need(t, "the real-task image "+docker.DebianImage+" (make real-images)", exec.Command("docker", "image", "inspect", docker.DebianImage))
}

// removeTaskImages removes the task images headroom built for tasks
// whose names start with prefix (headroom-task/<slug>:<digest>).
func removeTaskImages(t *testing.T, prefix string) {
	cli, err := docker.Connect()
	if err != nil {
		return
	}
	defer cli.Close()
	slug := strings.ReplaceAll(strings.ToLower(prefix), "/", "-")
	imgs, err := cli.ImageList(context.Background(), image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", docker.TaskRepo+"/"+slug+"*"))})
	if err != nil {
		return
	}
	for _, im := range imgs {
		for _, tag := range im.RepoTags {
			_, _ = cli.ImageRemove(context.Background(), tag, image.RemoveOptions{PruneChildren: true})
		}
	}
}

// experimentFiles is every file of the experiments under root, read.
func experimentFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil {
				out[p] = string(b)
			}
		}
		return nil
	})
	return out
}

// countIn counts the texts (files, output) that hold needle.
func countIn(needle string, texts ...map[string]string) (n int, where []string) {
	for _, m := range texts {
		for k, v := range m {
			if strings.Contains(v, needle) {
				n++
				where = append(where, k)
			}
		}
	}
	return n, where
}

// records reads the one experiment under root's records.
func records(t *testing.T, root string) (dir string, recs []map[string]any, left int) {
	t.Helper()
	dir, left = onlyExperiment(t, root)
	data, err := os.ReadFile(filepath.Join(dir, "trials.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("record %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	return dir, recs, left
}

func steps(r map[string]any) []map[string]any {
	var out []map[string]any
	list, _ := r["steps"].([]any)
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Item 10: a task directory whose compose bind mounts, env_file and
// build context lead by symbolic links to a host file (mode 600) and a
// host directory. The container, its log, its record, the build and the
// run's output must hold none of it.
func TestHostileLinksOutOfTheTaskDirectory(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	host := filepath.Join(root, "host")
	secret := "HOSTILE-LETOUT-HOSTFILE-" + randomHex(8)
	os.MkdirAll(host, 0o700)
	os.WriteFile(filepath.Join(host, "secret"), []byte(secret+"\n"), 0o600)
	name := "hostile-letout/links"
	dir := harborTask(t, filepath.Join(root, "tasks"), "links", name, map[string]string{
		"environment/Dockerfile":          "FROM " + docker.DebianImage + "\nCOPY . /ctx/\n",
		"environment/docker-compose.yaml": "services:\n  main:\n    build:\n      context: .\n    env_file: app.env\n    volumes:\n      - ./leak:/mnt/leak\n      - ./updir:/mnt/updir\n",
		"solution/solve.sh": "#!/bin/bash\n" +
			"cat /mnt/leak /mnt/updir/secret /ctx/ctx-leak /ctx/leak /tests/leak 2>&1\n" +
			"env | grep -c HOSTILE-LETOUT || true\n" +
			"grep -rs HOSTILE-LETOUT /mnt /ctx /tests /solution /etc /root 2>/dev/null | head -3 || true\n" +
			"ls -la /mnt /ctx\n",
	})
	for link, target := range map[string]string{
		"environment/leak": filepath.Join(host, "secret"), "environment/app.env": filepath.Join(host, "secret"),
		"environment/ctx-leak": filepath.Join(host, "secret"), "environment/updir": host, "tests/leak": filepath.Join(host, "secret"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeTaskImages(t, "hostile-letout/links") })
	audit := runBin(t, bin, nil, "tasks", "audit", dir)
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", filepath.Join(root, "tasks"), "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if run.code != 0 {
		t.Fatalf("run exit %d:\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	_, recs, left := records(t, out)
	leaked, where := countIn(secret, experimentFiles(t, out), map[string]string{"run stdout": run.stdout, "run stderr": run.stderr, "audit": audit.stdout + audit.stderr})
	if leaked > 0 {
		t.Errorf("the host file's text is in %v", where)
	}
	var notes []string
	for _, l := range strings.Split(audit.stdout, "\n") {
		if strings.Contains(l, "symbolic link out of the task directory") {
			notes = append(notes, regexp.MustCompile(`(host mount not mounted|env_file not read)`).FindString(l))
		}
	}
	if len(notes) != 3 {
		t.Errorf("audit names %d of the 3 links (2 mounts, an env_file):\n%s", len(notes), audit.stdout)
	}
	// A link that would carry a directory out refuses the task.
	refused := harborTask(t, filepath.Join(root, "refused"), "tests-out", "hostile-letout/tests-out", nil)
	os.RemoveAll(filepath.Join(refused, "tests"))
	os.MkdirAll(filepath.Join(host, "tests"), 0o700)
	os.WriteFile(filepath.Join(host, "tests", "test.sh"), []byte("#!/bin/sh\n"), 0o700)
	os.Symlink(filepath.Join(host, "tests"), filepath.Join(refused, "tests"))
	v := runBin(t, bin, nil, "tasks", "validate", refused)
	if v.code == 0 || !strings.Contains(v.stdout, "tests is a symbolic link out of the task directory") {
		t.Errorf("tests/ linked out: exit %d\n%s", v.code, v.stdout)
	}
	letoutRow(t, "links out of the task dir: compose bind mounts ./leak → host file (600) and ./updir → host dir, env_file → host file, links in the build context and tests/; tests/ → host dir",
		fmt.Sprintf("%d trial %s; deviations: %s ×2 and env_file not read (\"symbolic link out of the task directory\"); links inside the context and tests/ copied as links; tests/ → host dir refused at load", len(recs), recs[0]["outcome"], "host mount not mounted"),
		1-len(recs), leaked+left, 0)
}

// The bytes a terminal acts on rather than shows.
var controlBytes = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f]|\u0080|\u0081|\u009b|\u009d|\u202e")

// Item 11: escape codes from a task — a task name holding a clear
// screen, an OSC title and a newline; a solution printing clear-screen,
// cursor-home, title and carriage-return codes. No face (tasks list, the
// run's lines, report, the console's lists, detail and log view) carries
// one to the terminal, none gains a forged row, the terminal's title is
// untouched; the log file keeps the raw text.
func TestHostileEscapeCodes(t *testing.T) {
	needEngine(t)
	need(t, "tmux", exec.Command("tmux", "-V"))
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "named", "x", map[string]string{
		"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"hostile-letout/esc\\u001b[2J\\u001b]0;pwned-by-name\\u0007\\nforged/row  1  64MiB  oracle\"\n[environment]\nmemory_mb = 64\n",
	})
	name := "hostile-letout/escapes"
	harborTask(t, tasks, "escapes", name, map[string]string{
		"solution/solve.sh": "#!/bin/bash\nprintf 'before\\033[2J\\033[H\\033]0;pwned-by-output\\007after\\n'\nprintf 'shown\\roverwritten\\n'\nprintf '8-bit csi \\302\\2332J bidi \\342\\200\\256txet\\n'\n",
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	faces := map[string]string{}
	list := runBin(t, bin, nil, "tasks", "list", "--tasks-dir", tasks)
	faces["tasks list"] = list.stdout + list.stderr
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	faces["run"] = run.stdout + run.stderr
	if run.code != 0 {
		t.Fatalf("run exit %d:\n%s", run.code, faces["run"])
	}
	dir, recs, left := records(t, out)
	for _, f := range []string{"table", "markdown", "csv"} {
		r := runBin(t, bin, nil, "report", dir, "--format", f)
		faces["report "+f] = r.stdout + r.stderr
	}
	refused := strings.Contains(faces["tasks list"], `holds the control character U+001B`)
	forged := 0
	for face, text := range faces {
		if m := controlBytes.FindString(text); m != "" {
			t.Errorf("%s carries %q to the terminal:\n%q", face, m, text)
			forged++
		}
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "forged/row") {
				t.Errorf("%s has a forged row: %q", face, l)
				forged++
			}
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	// log.txt writes them escaped since round eight (a raw \r let a task
	// forge headroom's own lines there): the text whole, no byte raw.
	escaped := strings.Contains(string(log), `before\x1b[2J\x1b[H\x1b]0;pwned-by-output\x07after`) && !strings.ContainsAny(string(log), "\x1b\x07\r")

	// The console: the experiment opened from History, its trial's detail
	// and log. tmux takes what reaches the terminal; a title sequence
	// would set the pane's title.
	session := fmt.Sprintf("hr-hostile-esc-%d", os.Getpid())
	shell := fmt.Sprintf("%s --tasks-dir %s --out %s --theme plain; echo headroom exited $?; sleep 600", bin, tasks, out)
	if o, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40", shell).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, o)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", session).Run() })
	tm := term{t, session}
	setup := tm.waitFor(3*time.Minute, "hostile-letout/escapes")
	tm.keys("5")
	tm.waitFor(30*time.Second, "finished")
	tm.keys("Enter")
	tm.waitFor(30*time.Second, "oracle")
	tm.keys("Enter")
	tm.keys("Enter")
	detail := tm.waitFor(30*time.Second, `\x1b[2J`)
	title, _ := exec.Command("tmux", "display-message", "-p", "-t", session, "#{pane_title}").Output()
	if strings.Contains(string(title), "pwned") {
		t.Errorf("the terminal's title was set by the task: %q", title)
		forged++
	}
	for _, screen := range []string{setup, detail} {
		if strings.Contains(screen, "\nforged/row") {
			t.Errorf("a forged row on the console:\n%s", screen)
			forged++
		}
	}
	tm.keys("q")
	tm.waitUntil(time.Minute, "the console to quit", func(s string) bool {
		if strings.Contains(s, "headroom exited") {
			return true
		}
		tm.keys("y")
		return false
	})
	recorded := fmt.Sprintf("name refused at load (U+001B named) %v; %d trial %s; escapes shown as \\u001b… (\\x1b… in the console's log), \\r, \\u009b, \\u202e in tasks list, run, report (table, markdown, csv) and the console's setup, history, matrix, detail and log; pane title %q; log.txt escaped %v",
		refused, len(recs), recs[0]["outcome"], strings.TrimSpace(string(title)), escaped)
	if !refused || !escaped {
		t.Errorf("refused %v, log.txt escaped %v (want the escapes as text, no raw ESC, BEL or CR byte):\n%q", refused, escaped, log)
	}
	letoutRow(t, "escape codes: a task name with \\e[2J, an OSC title and a newline; solve.sh printing clear-screen, cursor-home, OSC title, CR, 8-bit CSI, bidi override", recorded, 1-len(recs), left, forged)
}

// Item 12: a solution printing the trace marker, fixed and with every
// nonce it can find (its environment, $PS4, every process's command line
// and environment), under bash and under sh alone. No step that never ran
// may appear, and every real command keeps its own status.
func TestHostileForgedStep(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	solve := "#!/bin/bash\n" +
		"printf '\\036[hr 0|0|1|1|0|0] FORGED-fixed-marker\\n'\n" +
		"printf '\\036[hr 0|0|1|1|0|0] : headroom-trace-end\\n'\n" +
		"sh -c 'printf \"\\036[hr %s 0|0|1|1|0|0] FORGED-env\\n\" \"$HEADROOM_TRACE_NONCE\"; printf \"\\036[hr %s sh] FORGED-ps4\\n\" \"$PS4\"'\n" +
		"for p in /proc/[0-9]*; do for n in $(cat $p/cmdline $p/environ 2>/dev/null | tr '\\000' '\\n' | grep -o '[A-Za-z0-9_-]\\{16\\}'); do printf '\\036[hr %s 0|0|1|1|0|0] FORGED-proc\\n\\036[hr %s sh] FORGED-proc\\n' $n $n; done; done\n" +
		// A command between: after a `for` over an empty $(…) list
		// (bash traces no `for` then), the next command is read as the
		// one the substitution was for (docs/RELIABILITY.md, left open).
		"echo scanned\n" +
		"false\n" +
		"echo end\n"
	harborTask(t, tasks, "bash", "hostile-letout/forge-bash", map[string]string{"solution/solve.sh": solve})
	harborTask(t, tasks, "sh", "hostile-letout/forge-sh", map[string]string{"solution/solve.sh": solve,
		"environment/Dockerfile": "FROM " + docker.DebianImage + "\nRUN rm -f /bin/bash /usr/bin/bash\n",
		"tests/test.sh":          "#!/bin/sh\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"})
	t.Cleanup(func() { removeTaskImages(t, "hostile-letout/forge") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-letout/forge-bash,hostile-letout/forge-sh", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if run.code != 0 {
		t.Fatalf("run exit %d:\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	_, recs, left := records(t, out)
	forged := 0
	var shapes []string
	for _, r := range recs {
		var names []string
		falseStatus := "?"
		for _, s := range steps(r) {
			n, _ := s["name"].(string)
			if s["phase"] != "agent" {
				continue
			}
			if strings.HasPrefix(n, "FORGED") || strings.HasPrefix(n, ": headroom-trace-end") {
				t.Errorf("%s: a step that never ran: %q", r["task"], n)
				forged++
			}
			if n == "false" {
				falseStatus = fmt.Sprint(s["exit_code"])
				if u, _ := s["exit_unknown"].(string); u != "" {
					falseStatus = "unknown"
				}
			}
			names = append(names, n)
		}
		shapes = append(shapes, fmt.Sprintf("%s: %d agent steps, `false` exit %s", r["task"], len(names), falseStatus))
		if r["task"] == "hostile-letout/forge-bash" && falseStatus != "1" {
			t.Errorf("under bash `false` recorded exit %s, want 1", falseStatus)
		}
	}
	letoutRow(t, "forged steps: solve.sh printing the trace marker fixed, with $HEADROOM_TRACE_NONCE, with $PS4, and with every 16-character base64url string (the nonce's shape) in any process's cmdline or environ (bash, and sh alone)",
		fmt.Sprintf("%d trials %s; the forgeries are the steps' output", len(recs), strings.Join(shapes, "; ")), 2-len(recs), left, forged)
}

// Item 13: a PEM-shaped secret passed with --pass-env and printed whole,
// a line at a time, inside other text and base64'd by the agent.
func TestHostileMultiLineSecret(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-letout/pem"
	harborTask(t, tasks, "pem", name, nil)
	t.Cleanup(func() { removeTaskImages(t, name) })
	var lines []string
	for i := 0; i < 4; i++ {
		lines = append(lines, strings.ToUpper(randomHex(24))[:48]+"+/"+randomHex(7))
	}
	pem := "-----BEGIN PRIVATE KEY-----\n" + strings.Join(lines, "\n") + "\n-----END PRIVATE KEY-----\n"
	agent := `printf '%s\n' "$HOSTILE_PEM"; printf '%s' "$HOSTILE_PEM" | while IFS= read -r l; do echo "key line: $l;"; done; printf '%s' "$HOSTILE_PEM" | base64 -w0; echo; echo "$HOSTILE_PEM" >&2; exit 3`
	out := filepath.Join(root, "out")
	run := runBin(t, bin, []string{"HOSTILE_PEM=" + pem}, "run", "--tasks-dir", tasks, "--tasks", name, "--agent-command", agent, "--agents", "command", "--pass-env", "HOSTILE_PEM", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	_, recs, left := records(t, out)
	texts := []map[string]string{experimentFiles(t, out), {"run stdout": run.stdout, "run stderr": run.stderr}}
	leaked := 0
	for _, l := range lines {
		n, where := countIn(l, texts...)
		if n > 0 {
			t.Errorf("line %s of the secret is in %v", l[:8], where)
		}
		leaked += n
	}
	masked, _ := countIn("[redacted HOSTILE_PEM]", texts...)
	b64, _ := countIn("LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t", texts...)
	letoutRow(t, "a PEM-shaped --pass-env secret printed whole, line by line, inside other text, on stderr, and base64'd",
		fmt.Sprintf("%d trial %s; [redacted HOSTILE_PEM] in %d files/streams; the base64 form passes (in %d), as docs/TASKS.md says exact-match masking cannot catch it", len(recs), recs[0]["outcome"], masked, b64),
		1-len(recs), leaked+left, 0)
}

// Item 14: a task.toml nested 50,000 inline tables deep (200 KB), and
// one 16,000 deep (64 KB, within the size bound), given to `tasks
// validate` and to a run.
func TestHostileDeepTaskFile(t *testing.T) {
	bin := hostileBin(t)
	root := t.TempDir()
	var recorded []string
	for _, depth := range []int{50000, 16000} {
		d := filepath.Join(root, fmt.Sprint(depth))
		harborTask(t, d, "deep", "x", map[string]string{
			"task.toml": "schema_version = \"1.1\"\n[task]\nname = \"hostile-letout/deep\"\n[metadata]\nx = " + strings.Repeat("{a=", depth) + "1" + strings.Repeat("}", depth) + "\n",
		})
		file := filepath.Join(d, "deep", "task.toml")
		st, _ := os.Stat(file)
		v := runBin(t, bin, nil, "tasks", "validate", filepath.Join(d, "deep"))
		run := runBin(t, bin, nil, "run", "--tasks-dir", d, "--out", filepath.Join(root, "out"), "--ratios", "1x", "--repeats", "1", "--tasks", "hostile-letout/deep")
		if v.code != 2 || !strings.Contains(v.stdout, file) || run.code == 0 {
			t.Errorf("depth %d: validate exit %d, run exit %d\n%s\n%s", depth, v.code, run.code, v.stdout, run.stderr)
		}
		why := regexp.MustCompile(`(larger than the 64KiB|nested more than 6 deep)`).FindString(v.stdout)
		recorded = append(recorded, fmt.Sprintf("%d deep, %d KB: refused (%s) in %s wall, %d MiB max RSS (the whole binary)", depth, st.Size()/1000, why, v.elapsed.Round(time.Millisecond), v.maxRSSKiB/1024))
	}
	letoutRow(t, "task.toml nested 50,000 inline tables deep (200 KB), and 16,000 deep (64 KB)", strings.Join(recorded, "; "), 0, 0, 0)
}

// Item 15: a run starts while another process's reaper scans the engine
// in a loop. The reaper removes the leftovers whose headroom is gone (a
// dead pid with its start time) with the evidence, and none of the live
// run's containers, however early in their life it sees them.
func TestHostileReaperWhileARunStarts(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	ctx := context.Background()
	p, err := docker.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	eng := session.New(p)
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	// A headroom that is gone: a real process that ran and was waited for,
	// labelled with its pid and start time as a crashed headroom's
	// containers are.
	dead := exec.Command("sleep", "60")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	deadOwner := runner.OwnerOf(dead.Process.Pid)
	dead.Process.Kill()
	dead.Wait()
	planted := "hostile-reap-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() {
		list, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+planted))})
		for _, c := range list {
			cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		}
	})
	plant := func(trial, owner string, kept bool) string {
		labels := map[string]string{runner.LabelHeadroom: "1", runner.LabelExperiment: planted, runner.LabelTrial: trial, runner.LabelOwner: owner}
		if kept {
			labels[runner.LabelKept] = "1"
		}
		// Created, not started: what a headroom killed between its create
		// and start leaves.
		c, err := cli.ContainerCreate(ctx, &container.Config{Image: docker.DebianImage, Cmd: []string{"sleep", "600"}, Labels: labels},
			&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}

	// The run: its own process, its own owner label.
	out := filepath.Join(root, "out")
	runCmd := exec.Command(bin, "run", "--tasks", "swe-edit", "--ratios", "1x,uncapped", "--repeats", "3", "--concurrency", "2", "--out", out)
	runCmd.Env = append(os.Environ(), "NO_COLOR=1")
	var runOut bytes.Buffer
	runCmd.Stdout, runCmd.Stderr = &runOut, &runOut
	if err := runCmd.Start(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	runOwner := fmt.Sprintf("%s:%d:", host, runCmd.Process.Pid)
	mine := func(o runner.OwnedResource) bool {
		return o.Experiment == planted || strings.HasPrefix(o.Owner, runOwner)
	}
	// Planted once the run is past its own start-up reap (its first
	// container exists), so the scanning reaper is the one to find them.
	waitForCond(t, "the run's first container", 3*time.Minute, func() bool {
		list, _ := p.Owned(ctx)
		for _, o := range list {
			if strings.HasPrefix(o.Owner, runOwner) {
				return true
			}
		}
		return false
	})
	deadIDs := map[string]bool{plant("t0001", deadOwner, false): true, plant("t0002", deadOwner, false): true, plant("t0003", deadOwner, false): true}
	spare := map[string]string{plant("t0004", deadOwner, true): "kept", plant("t0005", runner.Owner(), false): "live owner (this test)"}

	var mu sync.Mutex
	var removed []runner.OwnedResource
	seenLive := map[string]bool{}
	scans := 0
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := eng.Clean(ctx, func(o runner.OwnedResource) bool {
					if !mine(o) {
						return false // another session's, on this shared engine: not this test's to touch
					}
					if strings.HasPrefix(o.Owner, runOwner) && o.OwnerAlive {
						mu.Lock()
						seenLive[o.ID] = true
						mu.Unlock()
					}
					return !o.Kept && !o.OwnerAlive
				}, false)
				mu.Lock()
				scans++
				removed = append(removed, got...)
				mu.Unlock()
				if err != nil {
					t.Logf("scan: %v", err)
				}
			}
		}()
	}
	runErr := runCmd.Wait()
	close(done)
	wg.Wait()
	if runErr != nil {
		t.Errorf("the run failed: %v\n%s", runErr, runOut.String())
	}
	_, recs, left := records(t, out)
	// A live container removed under its trial would end that trial as
	// killed from outside (or the engine lost, or cancelled): the task's
	// own outcomes (swe-edit fails its tests by design) are not the
	// reaper's.
	harmed := 0
	outcomes := map[string]int{}
	for _, r := range recs {
		outcomes[fmt.Sprint(r["outcome"])]++
		if r["outcome"] == "cancelled" || r["cause"] == "killed-outside" || r["cause"] == "engine-lost" {
			t.Errorf("trial %s: %s, cause %v (%v)", r["id"], r["outcome"], r["cause"], r["reason"])
			harmed++
		}
	}
	wrong, twice := 0, 0
	var evidence []string
	gone := map[string]bool{}
	for _, o := range removed {
		line := session.ReapLine(o)
		t.Log(line)
		switch {
		case gone[o.ID]:
			// Both reapers asked; the engine removed it once (the second
			// found it gone or its removal under way).
			twice++
			continue
		case !deadIDs[o.ID]:
			t.Errorf("removed what was not a leftover: %s", line)
			wrong++
			continue
		}
		gone[o.ID] = true
		evidence = append(evidence, line)
		if !strings.Contains(o.OwnerCheck.Evidence, fmt.Sprintf("pid %d", dead.Process.Pid)) || o.OwnerCheck.At.IsZero() || o.Removed.Before(o.OwnerCheck.At) {
			t.Errorf("the removal's evidence does not prove the owner gone: %s", line)
		}
	}
	if len(gone) != len(deadIDs) {
		t.Errorf("%d of %d leftovers of the dead owner removed", len(gone), len(deadIDs))
	}
	for id, why := range spare {
		if _, err := cli.ContainerInspect(ctx, id); err != nil {
			t.Errorf("the %s container was removed: %v", why, err)
			wrong++
		}
	}
	sample := ""
	if len(evidence) > 0 {
		sample = evidence[0][strings.Index(evidence[0], "gone: ")+6:]
	}
	letoutRow(t, "a run (6 trials, concurrency 2) starting while two reapers of another process scan in a loop; 3 leftovers of a dead headroom (its pid and start time), 1 kept, 1 of a live owner",
		fmt.Sprintf("%d scans saw %d of the run's containers live and removed none: %d trials recorded %v, none an infra error; the 3 leftovers removed (%d more asks found one gone already), each logged with its evidence (%q); kept and live-owned spared", scans, len(seenLive), len(recs), outcomes, twice, sample),
		6-len(recs), left+wrong+harmed, 0)
}

func waitForCond(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Found while trying to read host secrets from a task: a task's own
// [solution.env] STOLEN = "${HOST_VARIABLE}" handed any variable of
// headroom's environment (a token, a cloud key) to the container, which
// printed it base64'd and reversed into its log and record. A task now
// gets only the variables the user names with --pass-env.
func TestHostileTaskNamesAHostVariable(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	name := "hostile-letout/envvar"
	token := "ghp_HOSTILE" + randomHex(12)
	solve := "#!/bin/bash\necho \"stolen=$(printf %s \"$STOLEN\" | base64 -w0) reversed=$(printf %s \"$STOLEN\" | rev) level=$LEVEL\"\n"
	harborTask(t, tasks, "envvar", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[environment]\nmemory_mb = 64\nallow_internet = false\n[solution.env]\nSTOLEN = \"${HOSTILE_TOKEN}\"\nLEVEL = \"${HOSTILE_TOKEN:-the-default}\"\n", name),
		"solution/solve.sh": solve,
	})
	t.Cleanup(func() { removeTaskImages(t, name) })
	env := []string{"HOSTILE_TOKEN=" + token}
	out := filepath.Join(root, "out")
	refused := runBin(t, bin, env, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if refused.code != 2 || !strings.Contains(refused.stderr, "reads HOSTILE_TOKEN from headroom's environment into its container") {
		t.Errorf("not named: exit %d\n%s", refused.code, refused.stderr)
	}
	_, err := os.Stat(out)
	started := err == nil
	// The same task with the template's default only: the host is not read.
	harborTask(t, tasks, "envvar", name, map[string]string{
		"task.toml":         fmt.Sprintf("schema_version = \"1.1\"\n[task]\nname = %q\n[environment]\nmemory_mb = 64\nallow_internet = false\n[solution.env]\nLEVEL = \"${HOSTILE_TOKEN:-the-default}\"\n", name),
		"solution/solve.sh": solve,
	})
	run := runBin(t, bin, env, "run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	if run.code != 0 {
		t.Fatalf("run exit %d:\n%s", run.code, run.stderr)
	}
	dir, recs, left := records(t, out)
	texts := []map[string]string{experimentFiles(t, out), {"stdout": refused.stdout + run.stdout, "stderr": refused.stderr + run.stderr}}
	leaked := 0
	for _, form := range []string{token, hex.EncodeToString([]byte(token)), reverse(token), base64Of(token)} {
		n, where := countIn(form, texts...)
		if n > 0 {
			t.Errorf("the host token (as %q) is in %v", form, where)
		}
		leaked += n
	}
	log, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	if !strings.Contains(string(log), "level=the-default") {
		t.Errorf("the default did not stand in:\n%s", log)
	}
	if started {
		t.Errorf("the refused run made an experiment")
	}
	letoutRow(t, "a task's [solution.env] STOLEN = \"${HOSTILE_TOKEN}\" naming a host variable (set), printed base64'd and reversed",
		fmt.Sprintf("refused before any trial (exit 2: \"add --pass-env HOSTILE_TOKEN if you trust the task\"); with only \"${HOSTILE_TOKEN:-the-default}\", %d trial %s with the default, the host's value not read", len(recs), recs[0]["outcome"]),
		1-len(recs), leaked+left, 0)
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func base64Of(s string) string {
	out, _ := exec.Command("sh", "-c", "printf %s \"$0\" | base64 -w0", s).Output()
	return string(out)
}

// Found while trying to forge a verdict: the agent writes the reward
// file itself (reward.txt and reward.json saying 1) and the verifier
// crashes before writing one; or the agent leaves a directory where the
// verifier would write reward.txt. The first was recorded passed, the
// second an infra error (excluded from the ratio comparison), as was a
// verifier leaving a directory as its reward. The reward files are now
// removed before the verifier runs, and a reward that is not a regular
// file is the task's failure.
func TestHostilePlantedReward(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "file", "hostile-letout/planted-file", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\necho '{\"reward\": 1}' > /logs/verifier/reward.json\n",
		"tests/test.sh":     "#!/bin/bash\necho the tests crash before writing a reward\nexit 1\n",
	})
	harborTask(t, tasks, "dir", "hostile-letout/planted-dir", map[string]string{
		"solution/solve.sh": "#!/bin/bash\nmkdir -p /logs/verifier/reward.txt\n",
	})
	// A verifier that leaves a directory as its reward is the task's own
	// failure, not the engine's.
	harborTask(t, tasks, "verifier-dir", "hostile-letout/planted-by-verifier", map[string]string{
		"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier/reward.txt\n",
	})
	t.Cleanup(func() { removeTaskImages(t, "hostile-letout/planted") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-letout/planted-file,hostile-letout/planted-dir,hostile-letout/planted-by-verifier", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	_, recs, left := records(t, out)
	forged := 0
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s: %s (%v)", r["task"], r["outcome"], r["reason"]))
		switch r["task"] {
		case "hostile-letout/planted-file":
			if r["outcome"] != "failed" || r["reward"] != nil {
				t.Errorf("the agent's own reward was the verdict: %v (%v), reward %v", r["outcome"], r["reason"], r["reward"])
				forged++
			}
		case "hostile-letout/planted-dir":
			if r["outcome"] != "passed" {
				t.Errorf("the agent's directory made the verdict %v (%v); the verifier wrote 1", r["outcome"], r["reason"])
				forged++
			}
		case "hostile-letout/planted-by-verifier":
			if r["outcome"] != "failed" || !strings.Contains(fmt.Sprint(r["reason"]), "not a regular file") {
				t.Errorf("the verifier's own directory: %v (%v), want failed, not the engine's", r["outcome"], r["reason"])
				forged++
			}
		}
	}
	if run.code != 0 && run.code != 1 {
		t.Errorf("run exit %d:\n%s", run.code, run.stderr)
	}
	letoutRow(t, "a verdict planted by the agent: reward.txt and reward.json saying 1 with a verifier that crashes before writing one; a directory where the verifier writes reward.txt; a verifier leaving a directory as its reward",
		strings.Join(got, "; "), 3-len(recs), left, forged)
}

// oracleArgs are the arguments of a hostile row's run: task name (or
// names, comma-separated) from tasks, its oracle once at 1x, into out.
func oracleArgs(tasks, name, out string) []string {
	return []string{"run", "--tasks-dir", tasks, "--tasks", name, "--agents", "oracle", "--ratios", "1x", "--repeats", "1", "--out", out}
}

// oracleRow is one hostile row's run of a task's oracle, once at 1x:
// what it printed, recorded and left, its one record's outcome, cause
// and reason, and where the row's secret showed.
type oracleRow struct {
	run                    result
	dir                    string
	recs                   []map[string]any
	left                   int
	outcome, cause, reason string
	files                  map[string]string
	leaked                 int
	where                  []string
}

// runOracleRow runs task name's oracle once at 1x through bin (the task's
// images removed after the test) and counts secret (unless "") in every
// file of the experiment and in the run's output.
func runOracleRow(t *testing.T, bin, tasks, name, secret string) oracleRow {
	t.Helper()
	t.Cleanup(func() { removeTaskImages(t, name) })
	out := filepath.Join(t.TempDir(), "out")
	var r oracleRow
	r.run = runBin(t, bin, nil, oracleArgs(tasks, name, out)...)
	r.dir, r.recs, r.left = records(t, out)
	r.outcome, r.cause, r.reason = oneRecord(r.recs)
	r.files = experimentFiles(t, out)
	if secret != "" {
		r.leaked, r.where = countIn(secret, r.files, map[string]string{"stdout": r.run.stdout, "stderr": r.run.stderr})
	}
	return r
}
