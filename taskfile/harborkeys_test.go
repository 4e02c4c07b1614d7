package taskfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Keys Harbor does not read are not applied from a Harbor task.toml: an
// [environment.network] table loads (it was a TOML type error), and
// headroom's own keys (network = "none", memory_limit, pids_limit, image,
// idle_command, capabilities, [[services]]) are ignored, each listed and
// a deviation at its line, so the audit does not call the task faithful.
func TestHarborIgnoresHeadroomKeys(t *testing.T) {
	for _, c := range []struct {
		name, toml string
		ignored    []string
		lines      []string
	}{
		{"network table", "[task]\nname = \"h/net-table\"\n[environment]\nmemory_mb = 64\n[environment.network]\nmode = \"none\"\n",
			[]string{"environment.network"}, []string{":5: [environment] network"}},
		{"headroom network", "[task]\nname = \"h/net\"\n[environment]\nmemory_mb = 64\nnetwork = \"none\"\n",
			[]string{"environment.network"}, []string{":5: [environment] network"}},
		{"headroom keys", "[task]\nname = \"h/keys\"\n[environment]\nmemory_mb = 64\nmemory_limit = \"1G\"\npids_limit = 10\nimage = \"x:1\"\nidle_command = [\"sleep\", \"1\"]\n[[services]]\nname = \"db\"\nimage = \"postgres\"\n",
			[]string{"environment.idle_command", "environment.image", "environment.memory_limit", "environment.pids_limit", "services"},
			[]string{":5: [environment] memory_limit", ":6: [environment] pids_limit", ":7: [environment] image", ":8: [environment] idle_command", ":9: [[services]]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := harborDir(t, c.toml)
			if err := os.MkdirAll(filepath.Join(dir, "environment"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "environment", "Dockerfile"), []byte("FROM alpine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := LoadTaskDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			task := l.Task
			for _, k := range c.ignored {
				if !slices.Contains(l.Ignored, k) {
					t.Errorf("ignored %v, want %s listed", l.Ignored, k)
				}
			}
			var details []string
			for _, d := range task.AllDeviations() {
				if d.What == "headroom key ignored in a Harbor task" {
					details = append(details, d.Detail)
				}
			}
			for _, want := range c.lines {
				if !slices.ContainsFunc(details, func(d string) bool { return strings.HasPrefix(d, filepath.Join(dir, "task.toml")+want) }) {
					t.Errorf("deviations %q, want one at task.toml%s", details, want)
				}
			}
			// Harbor's own defaults apply: its network, its container (no pids limit in the harbor profile).
			if task.Network != "bridge" || task.Image != "" || task.Resources.MemoryLimitBytes != 0 || task.Resources.PidsLimit != 0 ||
				len(task.Sidecars) != 0 || !slices.Equal(task.IdleCommand, []string{"sh", "-c", "sleep infinity"}) {
				t.Errorf("applied: network %q image %q limit %d pids %d sidecars %d idle %q", task.Network, task.Image,
					task.Resources.MemoryLimitBytes, task.Resources.PidsLimit, len(task.Sidecars), task.IdleCommand)
			}
		})
	}
}

// In headroom's own files network is an engine network's name: a table
// is refused, naming the key.
func TestHeadroomNetworkMustBeAName(t *testing.T) {
	_, err := Parse("t.toml", []byte("[task]\nname = \"n\"\n[environment]\nimage = \"builtin\"\n[environment.network]\nmode = \"none\"\n[verifier]\nworkload = { duration_ms = 0 }\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nworkload = { duration_ms = 0 }\n"))
	if err == nil || !strings.Contains(err.Error(), "[environment] network must be the name of an engine network") {
		t.Errorf("network table: %v", err)
	}
	l, err := Parse("t.toml", []byte("[task]\nname = \"n\"\n[environment]\nimage = \"builtin\"\nnetwork = \"bridge\"\n[verifier]\nworkload = { duration_ms = 0 }\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nworkload = { duration_ms = 0 }\n"))
	if err != nil || l.Task.Network != "bridge" {
		t.Errorf("network = \"bridge\": %v, %q", err, l.Task.Network)
	}
}

// The first Dockerfile construct the classic builder refuses, at its line.
func TestBuildKitOnly(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"FROM a\nRUN echo hi\nCOPY x /x\n", ""},
		{"FROM a\nWORKDIR /app\nRUN cat > f <<'EOF'\nhello\nEOF\n", "Dockerfile:3: heredoc in RUN"},
		{"FROM a\nRUN <<EOT\nset -e\nEOT\n", "Dockerfile:2: heredoc in RUN"},
		{"FROM a\nCOPY <<EOF /f\nx\nEOF\n", "Dockerfile:2: heredoc in COPY"},
		{"FROM a\nRUN --mount=type=cache,target=/root/.cache pip install x\n", "Dockerfile:2: RUN --mount"},
		{"FROM a\nCOPY --chmod=755 x /x\n", "Dockerfile:2: COPY --chmod"},
		{"FROM a\nCOPY --link x /x\n", "Dockerfile:2: COPY --link"},
		{"FROM a\nRUN echo '<<not a heredoc'\n", ""},
		{"FROM a\nCOPY --chown=1:1 x /x\n", ""},
		{"", ""},
	} {
		if got := buildKitOnly("Dockerfile", parseDockerfile(c.text)); got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

// A task directory whose Dockerfile has a heredoc says it needs BuildKit;
// one without says nothing.
func TestTaskNeedsBuildKit(t *testing.T) {
	dir := harborDir(t, "[task]\nname = \"h/heredoc\"\n")
	if err := os.MkdirAll(filepath.Join(dir, "environment"), 0o755); err != nil {
		t.Fatal(err)
	}
	df := filepath.Join(dir, "environment", "Dockerfile")
	if err := os.WriteFile(df, []byte("FROM a\nRUN cat > /f <<'EOF'\nx\nEOF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Task.NeedsBuildKit(); !slices.Equal(got, []string{"image: Dockerfile:2: heredoc in RUN"}) {
		t.Errorf("needs %q", got)
	}
	if err := os.WriteFile(df, []byte("FROM a\nRUN echo x > /f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err = LoadTaskDir(dir); err != nil || len(l.Task.NeedsBuildKit()) != 0 {
		t.Errorf("plain Dockerfile: %v, needs %q", err, l.Task.NeedsBuildKit())
	}
}

// A plain Harbor task is graded as Harbor grades it (a timed-out agent's
// work verified, runner/pipeline.go): the audit finds it faithful, as it
// finds a multi-step one.
func TestForeignTasksAreGradedAsTheirHarness(t *testing.T) {
	for _, dir := range []string{"testdata/harbor/largest-eigenval", "testdata/tbdirs/harbor-multi-step"} {
		l, err := LoadTaskDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range l.Task.AllDeviations() {
			if strings.Contains(d.What, "graded") || strings.Contains(d.What, "timeout") {
				t.Errorf("%s: deviation %q: a trial is graded as its harness grades it", dir, d.What)
			}
		}
	}
}

// Any Dockerfile text: an answer naming the file at a line, or none.
func FuzzBuildKitOnly(f *testing.F) {
	for _, s := range []string{"FROM a\nRUN cat > f <<'EOF'\nx\nEOF\n", "FROM a\nRUN --mount=type=cache,target=/c true\n", "FROM a\nCOPY --chmod=7 x /x\n", "RUN <<A <<B\na\nA\nb\nB\n", "\\\n<<", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got := buildKitOnly("Dockerfile", parseDockerfile(text)); got != "" && !strings.HasPrefix(got, "Dockerfile:") {
			t.Errorf("%q: %q", text, got)
		}
	})
}
