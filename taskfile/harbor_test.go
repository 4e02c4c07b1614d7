package taskfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// harborDir writes a minimal Harbor task directory around a task.toml.
func harborDir(t *testing.T, toml string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	for name, body := range map[string]string{
		"task.toml":      toml,
		"instruction.md": "do it\n",
		"tests/test.sh":  "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// deviationNames are the names of a task's deviations: what its file
// makes headroom run differently from its harness.
func deviationNames(t model.Task) []string {
	var out []string
	for _, d := range t.AllDeviations() {
		out = append(out, d.What)
	}
	return out
}

// What Harbor's task config reads, read the same way.
func TestHarborFieldsDecode(t *testing.T) {
	const head = "[task]\nname = \"x/y\"\n[environment]\ndocker_image = \"img:1\"\n"
	tests := []struct {
		name    string
		toml    string
		check   func(t *testing.T, l Loaded)
		wantErr string
	}{
		{name: "float sizes", toml: head + "memory_mb = 4096.0\nstorage_mb = 10240.0\ncpus = 2.0\ngpus = 0.0\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Resources.MemoryBytes != 4096*model.MiB || l.Task.StorageBytes != 10240*model.MiB || l.Task.Resources.CPUs != 2 || l.Task.GPUs != 0 {
					t.Errorf("resources %+v storage %d gpus %d", l.Task.Resources, l.Task.StorageBytes, l.Task.GPUs)
				}
			}},
		{name: "fractional memory refused", toml: head + "memory_mb = 4096.5\n", wantErr: "a whole number (got 4096.5)"},
		{name: "fractional storage refused", toml: head + "storage_mb = 1.5\n", wantErr: "storage_mb must be a whole number of MiB"},
		{name: "fractional gpus refused", toml: head + "gpus = 0.5\n", wantErr: "gpus must be a whole number"},
		{name: "verifier default is Harbor's 600 s", toml: head,
			check: func(t *testing.T, l Loaded) {
				if l.Task.VerifierTimeout != 600*time.Second || l.Task.AgentTimeout != 10*time.Minute {
					t.Errorf("verifier %s agent %s, want 10m0s both", l.Task.VerifierTimeout, l.Task.AgentTimeout)
				}
			}},
		{name: "env templates", toml: head + "[environment.env]\nA = \"${HR_KEY}\"\nB = \"${HR_LEVEL:-info}\"\nC = \"${HR_EMPTY:-}\"\nD = \"plain\"\nE = \"pre-${HR_X:-y}\"\n[verifier.env]\nJ = \"${HR_JUDGE:-none}\"\n",
			check: func(t *testing.T, l Loaded) {
				if want := []string{"A=HR_KEY", "B=HR_LEVEL:-info", "C=HR_EMPTY:-"}; !slices.Equal(l.Task.PassEnv, want) {
					t.Errorf("pass %v, want %v", l.Task.PassEnv, want)
				}
				if want := []string{"D=plain", "E=pre-${HR_X:-y}"}; !slices.Equal(l.Task.Env, want) {
					t.Errorf("env %v, want %v", l.Task.Env, want)
				}
				if want := []string{"J=HR_JUDGE:-none"}; !slices.Equal(l.Task.Verifier.PassEnv, want) {
					t.Errorf("verifier pass %v, want %v", l.Task.Verifier.PassEnv, want)
				}
				if !slices.Contains(deviationNames(l.Task), "env template not resolved") {
					t.Errorf("a template inside a value is not listed: %v", deviationNames(l.Task))
				}
			}},
		{name: "network_mode no-network", toml: head + "network_mode = \"no-network\"\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Network != "none" || len(deviationNames(l.Task)) != 0 {
					t.Errorf("network %q deviations %v", l.Task.Network, deviationNames(l.Task))
				}
			}},
		{name: "network_mode beats allow_internet", toml: head + "allow_internet = true\nnetwork_mode = \"no-network\"\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Network != "none" {
					t.Errorf("network %q, want none", l.Task.Network)
				}
			}},
		{name: "allow_internet false", toml: head + "allow_internet = false\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Network != "none" {
					t.Errorf("network %q, want none", l.Task.Network)
				}
			}},
		{name: "allowlist runs with network, said", toml: head + "network_mode = \"allowlist\"\nallowed_hosts = [\"pypi.org\"]\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Network != "bridge" || !slices.Equal(l.Task.AllowedHosts, []string{"pypi.org"}) || len(deviationNames(l.Task)) != 0 {
					t.Errorf("network %q allowed %v deviations %v: want the bridge, enforced to pypi.org", l.Task.Network, l.Task.AllowedHosts, deviationNames(l.Task))
				}
			}},
		{name: "allowed_hosts alone is an allowlist", toml: head + "allowed_hosts = [\"pypi.org\"]\n",
			check: func(t *testing.T, l Loaded) {
				if p := l.Task.BaselinePolicy(); p.Mode != model.NetworkAllowlist || len(deviationNames(l.Task)) != 0 {
					t.Errorf("policy %v deviations %v", p, deviationNames(l.Task))
				}
			}},
		{name: "allowed_hosts with public refused", toml: head + "network_mode = \"public\"\nallowed_hosts = [\"pypi.org\"]\n", wantErr: "allowed_hosts is only valid with network_mode = \"allowlist\""},
		{name: "unknown network_mode refused", toml: head + "network_mode = \"offline\"\n", wantErr: "[environment] network_mode must be \"public\", \"no-network\" or \"allowlist\" (got \"offline\")"},
		{name: "per-phase network applied", toml: head + "[agent]\nnetwork_mode = \"no-network\"\n[verifier]\nnetwork_mode = \"public\"\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.Network != "bridge" || l.Task.AgentNetwork == nil || l.Task.AgentNetwork.Mode != model.NetworkNone || l.Task.VerifierNetwork != nil || len(deviationNames(l.Task)) != 0 {
					t.Errorf("network %q agent %v verifier %v deviations %v: want the agent phase alone without network", l.Task.Network, l.Task.AgentNetwork, l.Task.VerifierNetwork, deviationNames(l.Task))
				}
			}},
		{name: "wildcard allowlist entry listed", toml: head + "network_mode = \"allowlist\"\nallowed_hosts = [\"*.pypi.org\", \"PyPI.org.\"]\n",
			check: func(t *testing.T, l Loaded) {
				if !slices.Equal(l.Task.AllowedHosts, []string{"*.pypi.org", "pypi.org"}) || !slices.Equal(deviationNames(l.Task), []string{"allowed_hosts wildcard not reachable"}) {
					t.Errorf("allowed %v deviations %v", l.Task.AllowedHosts, deviationNames(l.Task))
				}
			}},
		{name: "allowlist URL refused", toml: head + "network_mode = \"allowlist\"\nallowed_hosts = [\"https://pypi.org/simple\"]\n", wantErr: "not URLs, ports or paths"},
		{name: "workdir and users", toml: head + "workdir = \"/srv/app\"\n[agent]\nuser = \"agent\"\n[verifier]\nuser = 0\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.WorkDir != "/srv/app" || l.Task.AgentUser != "agent" || l.Task.Verifier.User != "0" {
					t.Errorf("workdir %q agent user %q verifier user %q", l.Task.WorkDir, l.Task.AgentUser, l.Task.Verifier.User)
				}
			}},
		{name: "relative workdir refused", toml: head + "workdir = \"app\"\n", wantErr: "workdir must be an absolute path"},
		{name: "healthcheck with Harbor's defaults", toml: head + "[environment.healthcheck]\ncommand = \"test -f /ready\"\n",
			check: func(t *testing.T, l Loaded) {
				hc := l.Task.Healthcheck
				want := model.Healthcheck{Test: []string{"CMD", "bash", "-c", "test -f /ready"}, Interval: 5 * time.Second, Timeout: 30 * time.Second, Retries: 3}
				if hc == nil || !slices.Equal(hc.Test, want.Test) || hc.Interval != want.Interval || hc.Timeout != want.Timeout || hc.Retries != want.Retries || hc.StartPeriod != 0 {
					t.Errorf("healthcheck %+v, want %+v", hc, want)
				}
			}},
		{name: "healthcheck set", toml: head + "[environment.healthcheck]\ncommand = \"true\"\ninterval_sec = 0.5\ntimeout_sec = 2\nstart_period_sec = 10.0\nstart_interval_sec = 1.0\nretries = 30\n",
			check: func(t *testing.T, l Loaded) {
				hc := l.Task.Healthcheck
				if hc.Interval != 500*time.Millisecond || hc.Timeout != 2*time.Second || hc.StartPeriod != 10*time.Second || hc.Retries != 30 {
					t.Errorf("healthcheck %+v", hc)
				}
			}},
		{name: "healthcheck without command refused", toml: head + "[environment.healthcheck]\nretries = 2\n", wantErr: "[environment.healthcheck] command is missing"},
		{name: "gpus passed through, said", toml: head + "gpus = 1\ngpu_types = [\"H100\"]\n",
			check: func(t *testing.T, l Loaded) {
				if l.Task.GPUs != 1 || !slices.Equal(deviationNames(l.Task), []string{"gpus passed through", "gpu_types not enforced"}) {
					t.Errorf("gpus %d deviations %v", l.Task.GPUs, deviationNames(l.Task))
				}
			}},
		{name: "windows refused", toml: head + "os = \"windows\"\n", wantErr: "headroom runs Linux containers only"},
		{name: "metadata and empty lists are quiet", toml: "artifacts = []\n" + head + "mcp_servers = []\nfuture_list = []\n[metadata]\ndifficulty = \"hard\"\n[metadata.extra]\nrepo = \"r\"\n[[metadata.runs]]\nn = 1\n",
			check: func(t *testing.T, l Loaded) {
				if len(l.Ignored) != 0 {
					t.Errorf("ignored %v, want none", l.Ignored)
				}
			}},
		{name: "a real unknown key is still listed", toml: head + "future_knob = 3\n",
			check: func(t *testing.T, l Loaded) {
				if !slices.Equal(l.Ignored, []string{"environment.future_knob"}) {
					t.Errorf("ignored %v", l.Ignored)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := LoadTaskDir(harborDir(t, tt.toml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "task.toml") {
					t.Fatalf("err = %v, want one naming task.toml and %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, l)
		})
	}
}

// Real public task.toml files load faithfully, or with what differs listed.
func TestRealHarborTaskFiles(t *testing.T) {
	// Terminal-Bench 2.1's largest-eigenval: pinned image beside a
	// Dockerfile, empty lists, free-form metadata.
	l, err := LoadTaskDir("testdata/harbor/largest-eigenval")
	if err != nil {
		t.Fatal(err)
	}
	tk := l.Task
	if len(l.Ignored) != 0 {
		t.Errorf("ignored %v, want none", l.Ignored)
	}
	if tk.Image != "alexgshaw/largest-eigenval:20251031" || tk.Build == nil {
		t.Errorf("image %q build %v: want the pinned image, the Dockerfile kept as a fallback", tk.Image, tk.Build)
	}
	if tk.Profile != model.ProfileHarbor || tk.Resources.PidsLimit != 0 || tk.VerifierTimeout != 900*time.Second || tk.Network != "bridge" {
		t.Errorf("profile %q pids %d verifier %s network %q", tk.Profile, tk.Resources.PidsLimit, tk.VerifierTimeout, tk.Network)
	}
	// Faithful: its storage_mb is not bounded, as under Harbor's Docker
	// environment (run --apply-storage is the operator's choice).
	if d := deviationNames(tk); len(d) != 0 {
		t.Errorf("deviations %v, want none", d)
	}
	tk.SetProfile(model.ProfileHardened)
	if got := deviationNames(tk); !slices.Contains(got, "hardened profile: capabilities dropped") || !slices.Contains(got, "hardened profile: pids limited") || tk.Resources.PidsLimit != model.DefaultPidsLimit {
		t.Errorf("hardened: deviations %v pids %d", got, tk.Resources.PidsLimit)
	}

	// Harbor 1.3 (AlienKevin/sprint g1-100-metres): no-network, a separate
	// continuous verifier.
	l, err = LoadTaskDir("testdata/harbor/g1-100-metres")
	if err != nil {
		t.Fatal(err)
	}
	if l.Task.Network != "none" || l.Task.Resources.MemoryBytes != 8192*model.MiB || l.Task.Resources.CPUs != 2 {
		t.Errorf("network %q resources %+v", l.Task.Network, l.Task.Resources)
	}
	want := []string{"continuous verification not run", "separate verifier: gpus passed through", "separate verifier: gpu_types not enforced"}
	if got := deviationNames(l.Task); !slices.Equal(got, want) {
		t.Errorf("deviations %v, want %v", got, want)
	}
	if len(l.Ignored) != 0 {
		t.Errorf("ignored %v, want none", l.Ignored)
	}
	sv := l.Task.SeparateVerifier
	if sv == nil || sv.Build == nil || filepath.Base(sv.Build.Context) != "tests" || sv.Resources.CPUs != 4 || sv.Resources.MemoryBytes != 10240*model.MiB || sv.Network != "none" || sv.GPUs != 1 {
		t.Errorf("separate verifier %+v: want tests/Dockerfile, 4 CPUs, 10 GiB, no network, 1 GPU", sv)
	}
	if len(l.Task.Verifier.Files) != 1 || l.Task.Verifier.Files[0].From != "" {
		t.Errorf("verifier uploads %v: the tests are in the separate verifier's image, only /logs/verifier is made", l.Task.Verifier.Files)
	}
}

// Headroom's own files and the built-in tasks are hardened, and have no
// other harness to deviate from.
func TestOwnTasksHardened(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range c.Tasks {
		if l.Task.Profile != model.ProfileHardened || l.Task.Resources.PidsLimit <= 0 || len(deviationNames(l.Task)) != 0 {
			t.Errorf("%s: profile %q pids %d deviations %v", l.Task.Name, l.Task.Profile, l.Task.Resources.PidsLimit, l.Task.AllDeviations())
		}
	}
}

// A user that is not a name or uid[:gid] is refused where it is written:
// the compose file's `user: "0 $(touch …) x"` was printed unquoted in the
// docker run headroom shows.
func TestUserNotANameRefused(t *testing.T) {
	const toml = "[task]\nname = \"x/user\"\n[environment]\ndocker_image = \"img:1\"\n"
	dir := harborDir(t, toml)
	compose := "services:\n  main:\n    image: img:1\n    user: \"0 $(touch /tmp/PWNED) x\"\n"
	if err := os.WriteFile(filepath.Join(dir, "environment", "docker-compose.yaml"), []byte(compose), 0o644); err != nil {
		if err := os.MkdirAll(filepath.Join(dir, "environment"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "environment", "docker-compose.yaml"), []byte(compose), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := LoadTaskDir(dir)
	if err == nil || !strings.Contains(err.Error(), "docker-compose.yaml:4:") || !strings.Contains(err.Error(), "is not a user") {
		t.Errorf("compose user: %v; want a refusal at docker-compose.yaml:4", err)
	}
	_, err = LoadTaskDir(harborDir(t, toml+"[verifier]\nuser = \"root; id\"\n"))
	if err == nil || !strings.Contains(err.Error(), "task.toml:6:") || !strings.Contains(err.Error(), "is not a user") {
		t.Errorf("verifier user: %v; want a refusal at task.toml:6", err)
	}
	for _, ok := range []string{"1000:1000", "app", "root:0", "_svc.x-1"} {
		if _, err := LoadTaskDir(harborDir(t, toml+"[verifier]\nuser = \""+ok+"\"\n")); err != nil {
			t.Errorf("user %q refused: %v", ok, err)
		}
	}
}

// A Harbor task without instruction.md loads, warned: Harbor refuses it,
// and validate said ok while the agent would get an empty instruction (a
// new user's try).
func TestHarborMissingInstructionIsWarned(t *testing.T) {
	dir := harborDir(t, "schema_version = \"1.1\"\n[task]\nname = \"x/noinstr\"\n[environment]\ndocker_image = \"debian:12\"\n")
	l, err := LoadTaskDir(dir)
	if err != nil || len(l.Warnings) != 0 {
		t.Fatalf("with instruction.md: %v, warnings %q", err, l.Warnings)
	}
	if err := os.Remove(filepath.Join(dir, "instruction.md")); err != nil {
		t.Fatal(err)
	}
	l, err = LoadTaskDir(dir)
	if err != nil || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "instruction.md is missing: Harbor refuses a task without one") {
		t.Errorf("without instruction.md: %v, warnings %q; want one warning saying Harbor refuses it", err, l.Warnings)
	}
	// The catalog says it as it is, naming the missing file, not under
	// task.toml's name (a new user read "task.toml: …/instruction.md").
	var c Catalog
	if err := c.AddDir(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "instruction.md") + " is missing"; len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], want) {
		t.Errorf("the catalog's warnings %q; want one starting %q", c.Warnings, want)
	}
}

// A time limit shorter than a step takes to start is refused at its line
// (the eighth attacker's finding 2: timeout_sec = 1e-6 cut the engine's
// own calls and the trial read as the engine gone); 10 ms is timed.
func TestHarborTimeoutTooShortIsRefused(t *testing.T) {
	for _, c := range []struct {
		v    string
		want string
	}{
		{"1e-6", "[agent] timeout_sec = 1e-06 is shorter than any step takes to start: give at least 0.01 seconds"},
		{"0.001", "[agent] timeout_sec = 0.001 is shorter than any step takes to start"},
		{"0.01", ""},
	} {
		dir := harborDir(t, "schema_version = \"1.1\"\n[task]\nname = \"x/short\"\n[agent]\ntimeout_sec = "+c.v+"\n[environment]\ndocker_image = \"debian:12\"\n")
		_, err := LoadTaskDir(dir)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "task.toml:5:")) {
			t.Errorf("timeout_sec = %s: %v; want %q at its line", c.v, err, c.want)
		}
	}
}

// Harbor runs its verifier as `bash /tests/test.sh | tee
// /logs/verifier/test-stdout.txt`, and every command as `bash -c`: a
// Harbor task's verifier tees its stdout there, and its verifier and
// oracle need bash.
func TestHarborVerifierTeesAndNeedsBash(t *testing.T) {
	dir := harborDir(t, "[task]\nname = \"x/y\"\n[environment]\ndocker_image = \"img:1\"\n")
	if err := os.MkdirAll(filepath.Join(dir, "solution"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "solution", "solve.sh"), []byte("#!/bin/bash\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := l.Task.Verifier; v.TeeStdout != "/logs/verifier/test-stdout.txt" || !v.NeedBash {
		t.Errorf("verifier tee %q need bash %v; want Harbor's test-stdout.txt and bash", v.TeeStdout, v.NeedBash)
	}
	for _, a := range l.Task.Agents {
		for _, s := range a.Steps {
			if s.Trace && !s.NeedBash {
				t.Errorf("agent %s step %s: traced without NeedBash (Harbor runs it under bash)", a.Name, s.Name)
			}
		}
	}
}

// A NUL byte no exec can take is refused at load, named: the step could
// not start, and the record charged the agent (exit 126).
func TestNULBytesAreRefusedAtLoad(t *testing.T) {
	dir := harborDir(t, "[environment]\ndocker_image = \"x\"\n[solution.env]\nX = \"a\\u0000b\"\n")
	if err := os.MkdirAll(filepath.Join(dir, "solution"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "solution", "solve.sh"), []byte("#!/bin/bash\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTaskDir(dir); err == nil || !strings.Contains(err.Error(), "X holds a NUL byte") {
		t.Errorf("[solution.env] with a NUL: %v", err)
	}
	dir = harborDir(t, "[environment]\ndocker_image = \"x\"\n")
	if err := os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("do it\x00 then this\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTaskDir(dir); err == nil || !strings.Contains(err.Error(), "instruction (instruction.md) holds a NUL byte") {
		t.Errorf("instruction.md with a NUL: %v", err)
	}
}

// A spec refused by its bound names the line of the key Harbor's file
// wrote it with (memory_mb), not its table's header (a new user's
// memory_mb = 1 was put at [environment]).
func TestHarborBoundErrorNamesTheKeysLine(t *testing.T) {
	dir := harborDir(t, "schema_version = \"1.1\"\n[task]\nname = \"x/small\"\n[environment]\ncpus = 1\nmemory_mb = 1\n")
	_, err := LoadTaskDir(dir)
	if want := filepath.Join(dir, "task.toml") + ":6: [environment] memory must be at least"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("memory_mb = 1: %v; want it at line 6, %q", err, want)
	}
}

// A variable with no name is refused at load, at its line: the engine
// refuses the container, so every trial was an infra error (and a
// verifier's was dropped), while validate said ok (the twenty-fifth
// attacker's 4). In headroom's own file and in a Harbor task.toml.
func TestAnEnvironmentVariableWithNoNameIsRefused(t *testing.T) {
	dir := harborDir(t, "[environment]\ndocker_image = \"x\"\n[verifier.env]\n\"\" = \"y\"\n")
	if _, err := LoadTaskDir(dir); err == nil || !strings.Contains(err.Error(), "task.toml:4: step \"verify\"'s environment sets a variable with no name (\"\" = \"y\")") {
		t.Errorf("[verifier.env] \"\": %v", err)
	}
	_, err := Parse("t.toml", []byte("[task]\nname = \"n\"\n[environment]\nimage = \"builtin\"\n[environment.env]\n\"\" = \"x\"\n[verifier]\nworkload = { duration_ms = 0 }\n[[agents]]\nname = \"a\"\n[[agents.steps]]\nworkload = { duration_ms = 0 }\n"))
	if err == nil || !strings.Contains(err.Error(), "t.toml:6: the task's environment sets a variable with no name") {
		t.Errorf("[environment.env] \"\": %v", err)
	}
}
