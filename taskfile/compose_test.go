package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// composeTask is a task as the loaders have it before its compose file.
func composeTask(dir string) model.Task {
	return model.Task{
		Name: "suite/" + filepath.Base(dir), IdleCommand: []string{"sleep", "infinity"},
		Resources: model.Resources{CPUs: 2, MemoryBytes: 4096 * model.MiB, Defaulted: []string{"pids_limit"}},
		Build:     &model.Build{Context: dir, Dockerfile: "Dockerfile", Timeout: 7 * time.Minute},
	}
}

// deviations are the task's deviations as text.
func deviations(task model.Task) []string {
	out := make([]string, 0, len(task.Deviations))
	for _, d := range task.Deviations {
		out = append(out, fmt.Sprint(d))
	}
	return out
}

func hasNote(notes []string, sub string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, sub) })
}

// Real compose files of public Harbor and terminal-bench tasks, read as
// their harness reads them.
func TestComposeRealFiles(t *testing.T) {
	tests := []struct {
		dir   string
		tb    bool
		check func(t *testing.T, task model.Task, files []model.Upload)
		err   string
	}{
		{dir: "o11y-bench", check: func(t *testing.T, task model.Task, files []model.Upload) {
			// main is Harbor's own, amended: env and a wait on the stack's health.
			if task.Build == nil || task.Image != "" {
				t.Errorf("main keeps its Dockerfile build: image %q build %v", task.Image, task.Build)
			}
			if !slices.Contains(task.Env, "GRAFANA_URL=http://o11y-stack-suite-o11y-bench:3000") {
				t.Errorf("env %v: COMPOSE_PROJECT_NAME should expand the same in main and the sidecar's alias", task.Env)
			}
			if len(task.PassEnv) != 0 || slices.ContainsFunc(task.Env, func(e string) bool { return strings.HasPrefix(e, "O11Y_SCENARIO_TIME_ISO=") }) {
				t.Errorf("env %v pass %v: a variable only Harbor's own environment gives is left out (and listed)", task.Env, task.PassEnv)
			}
			if !slices.Equal(task.DependsOn, []model.Dependency{{Service: "o11y-stack", Condition: model.ServiceHealthy}}) {
				t.Errorf("depends_on %v", task.DependsOn)
			}
			if len(task.Sidecars) != 1 {
				t.Fatalf("sidecars %+v", task.Sidecars)
			}
			sc := task.Sidecars[0]
			if sc.Name != "o11y-stack" || sc.Image != "o11y-bench-o11y-stack:latest" || sc.Build != nil {
				t.Errorf("sidecar %+v", sc)
			}
			if !slices.Equal(sc.Aliases, []string{"o11y-stack-suite-o11y-bench"}) {
				t.Errorf("aliases %v", sc.Aliases)
			}
			want := &model.Healthcheck{Test: []string{"CMD", "curl", "-sS", "-o", "/dev/null", "http://localhost:8080/"},
				Interval: 5 * time.Second, Timeout: 10 * time.Second, StartPeriod: 90 * time.Second, Retries: 60}
			if sc.Healthcheck == nil || !slices.Equal(sc.Healthcheck.Test, want.Test) || sc.Healthcheck.Interval != want.Interval ||
				sc.Healthcheck.Timeout != want.Timeout || sc.Healthcheck.StartPeriod != want.StartPeriod || sc.Healthcheck.Retries != want.Retries {
				t.Errorf("healthcheck %+v, want %+v", sc.Healthcheck, want)
			}
			// The bind of the task's own file is copied; the artifacts mount is Harbor's own.
			if len(sc.Files) != 1 || sc.Files[0].To != "/task" || sc.Files[0].Name != "setup.json" || !strings.HasSuffix(sc.Files[0].From, "o11y-bench/setup.json") {
				t.Errorf("files %+v", sc.Files)
			}
			for _, n := range []string{"network harbor-shared", "service main environment not given: O11Y_SCENARIO_TIME_ISO: the harness takes", "service o11y-stack environment not given: O11Y_SCENARIO_TIME_ISO", "o11y-stack bind mount copied in: ./setup.json:/task/setup.json"} {
				if !hasNote(deviations(task), n) {
					t.Errorf("no deviation %q in %q", n, task.Deviations)
				}
			}
		}},
		{dir: "signalforge", check: func(t *testing.T, task model.Task, files []model.Upload) {
			if task.Build == nil || task.Build.Target != "agent" || task.Build.Timeout != 7*time.Minute {
				t.Errorf("build %+v: the compose build (with its target) replaces the Dockerfile's, keeping the time limit", task.Build)
			}
			if task.User != "10001:10001" || !slices.Equal(task.IdleCommand, []string{"sleep", "infinity"}) {
				t.Errorf("user %q idle %v", task.User, task.IdleCommand)
			}
			if !slices.Contains(task.Env, "NO_PROXY=localhost,127.0.0.1,::1,aws,floci,runtime-setup") {
				t.Errorf("env %v", task.Env)
			}
			wantDeps := []model.Dependency{{Service: "runtime-setup", Condition: model.ServiceCompleted}, {Service: "floci", Condition: model.ServiceHealthy}}
			if !slices.Equal(task.DependsOn, wantDeps) {
				t.Errorf("depends_on %v", task.DependsOn)
			}
			var names []string
			for _, sc := range task.Sidecars {
				names = append(names, sc.Name)
			}
			if !slices.Equal(names, []string{"runtime-setup", "floci"}) {
				t.Fatalf("sidecars %v", names)
			}
			// The named volume config is shared: runtime-setup fills it, main reads it.
			if !slices.Equal(task.Volumes, []model.VolumeMount{{Volume: "config", Target: "/workspace/config", ReadOnly: true}}) {
				t.Errorf("main's volumes %+v", task.Volumes)
			}
			if v := task.Sidecars[0].Volumes; !slices.Equal(v, []model.VolumeMount{{Volume: "config", Target: "/config"}}) {
				t.Errorf("runtime-setup's volumes %+v", v)
			}
			setup := task.Sidecars[0]
			if !slices.Equal(setup.Command, []string{"/bin/sh", "/runtime.sh"}) || len(setup.Files) != 2 {
				t.Errorf("runtime-setup %+v", setup)
			}
			if floci := task.Sidecars[1]; !slices.Equal(floci.Aliases, []string{"aws", "aws"}) || !slices.Contains(floci.Env, "FLOCI_SERVICES_DOCKER_NETWORK=suite-signalforge_workload") {
				t.Errorf("floci %+v", floci)
			}
			// cap_add is honoured, under the capability rule: DAC_READ_SEARCH
			// reaches the host, so a run refuses it unless allowed.
			if !slices.Contains(task.Capabilities, "DAC_READ_SEARCH") || !strings.HasSuffix(task.CapabilitiesAt["DAC_READ_SEARCH"], "docker-compose.yaml:27 (service main cap_add)") {
				t.Errorf("capabilities %v at %v", task.Capabilities, task.CapabilitiesAt)
			}
			if err := task.CheckCapabilities(nil); err == nil || task.CheckCapabilities([]string{"DAC_READ_SEARCH"}) != nil {
				t.Errorf("DAC_READ_SEARCH not refused unless allowed: %v", err)
			}
			for _, n := range []string{"service floci host mount not mounted: /var/run/docker.sock:/var/run/docker.sock", "/etc/daytona/netleash/ca.crt", "network solver-control"} {
				if !hasNote(deviations(task), n) {
					t.Errorf("no deviation %q in %q", n, task.Deviations)
				}
			}
		}},
		{dir: "sharding", check: func(t *testing.T, task model.Task, files []model.Upload) {
			// platform is the host's here; security_opt is not honoured.
			if len(task.Sidecars) != 0 || task.Build == nil {
				t.Errorf("task %+v", task)
			}
			if !slices.Equal(deviations(task), []string{"service main security_opt not honoured"}) {
				t.Errorf("deviations %q", task.Deviations)
			}
		}},
		{dir: "frontier", err: "frontier/docker-compose.yaml:8: service gateway build: testdata/compose/frontier/environment/Dockerfile does not exist"},
		{dir: "tb-client", tb: true, check: func(t *testing.T, task model.Task, files []model.Upload) {
			if len(task.Sidecars) != 0 || len(task.Deviations) != 0 || len(files) != 0 {
				t.Errorf("the template compose is faithful as is: sidecars %v deviations %q files %v", task.Sidecars, task.Deviations, files)
			}
			if !slices.Equal(task.Env, []string{"TEST_DIR=/tests"}) || !slices.Equal(task.IdleCommand, []string{"sh", "-c", "sleep infinity"}) {
				t.Errorf("env %v idle %v", task.Env, task.IdleCommand)
			}
			// terminal-bench bind-mounts its logs directories: mount points
			// of the trial's volumes here.
			if !slices.Equal(task.HarnessMounts, []string{"/logs", "/agent-logs"}) {
				t.Errorf("harness mounts %q", task.HarnessMounts)
			}
		}},
		{dir: "tb-db", tb: true, check: func(t *testing.T, task model.Task, files []model.Upload) {
			if len(task.Sidecars) != 2 {
				t.Fatalf("sidecars %+v", task.Sidecars)
			}
			db, web := task.Sidecars[0], task.Sidecars[1]
			if db.Name != "database" || db.Image != "postgres:15" || db.MemoryLimitBytes != 256*model.MiB || !slices.Equal(db.Env, []string{"POSTGRES_PASSWORD=password"}) {
				t.Errorf("database %+v", db)
			}
			if web.Build == nil || !strings.HasSuffix(web.Build.Context, "tb-db/webserver") || !slices.Equal(web.DependsOn, []model.Dependency{{Service: "database", Condition: model.ServiceStarted}}) {
				t.Errorf("webserver %+v", web)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("testdata/compose", tc.dir)
			task := composeTask(dir)
			h := harborHarness(&task, dir, "")
			if tc.tb {
				h = tbHarness(&task)
			}
			files, err := applyCompose(&task, filepath.Join(dir, composeFile), dir, h)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, task, files)
		})
	}
}

// Compose files that a Dockerfile copies in as data are not the
// environment: only the file the harness reads is.
func TestComposeDataFilesAreNotTheEnvironment(t *testing.T) {
	for _, dir := range []string{"testdata/compose/harbor-copies-compose", "testdata/compose/tb-copies-compose"} {
		l, err := LoadTaskDir(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		// Every terminal-bench 1 task runs without the pane's terminal.
		devs := slices.DeleteFunc(slices.Clone(l.Task.Deviations), func(d model.Deviation) bool { return d.What == TerminalDeviation })
		if len(l.Task.Sidecars) != 0 || len(devs) != 0 {
			t.Errorf("%s: sidecars %v deviations %q", dir, l.Task.Sidecars, devs)
		}
	}
}

// A harness-format compose that headroom cannot read says where and why.
func TestComposeErrors(t *testing.T) {
	tests := []struct{ name, yaml, err string }{
		{"not a mapping", "- a\n", "x.yaml:1: a compose file is a mapping"},
		{"no services", "version: '3'\n", "no services"},
		{"bad memory", "services:\n  main:\n    mem_limit: lots\n", "x.yaml:3: service main mem_limit: size \"lots\" is not a memory size"},
		{"bad cpus", "services:\n  main:\n    deploy:\n      resources:\n        limits:\n          cpus: '-1'\n", "x.yaml:6: service main deploy.resources.limits.cpus: \"-1\" is not a positive number"},
		{"tiny service cpus", "services:\n  main:\n    image: x\n  burn:\n    image: x\n    cpus: 1e-12\n", "x.yaml:6: service burn cpus: \"1e-12\" is under 0.01, the smallest CPU limit the engine takes"},
		{"unknown dependency", "services:\n  main:\n    depends_on: [db]\n", "x.yaml:2: service main depends on db, which the file does not define"},
		{"cycle", "services:\n  a:\n    image: x\n    depends_on: [b]\n  b:\n    image: y\n    depends_on: [a]\n", "depends on itself"},
		{"bad condition", "services:\n  db:\n    image: x\n  main:\n    depends_on:\n      db:\n        condition: service_ready\n", "x.yaml:7: service main depends_on.db.condition: \"service_ready\" is not one of"},
		{"no image", "services:\n  db:\n    environment: [A=1]\n", "x.yaml:2: service db has neither image: nor build:"},
		{"extends", "services:\n  db:\n    extends:\n      file: base.yaml\n", "x.yaml:4: service db: extends is not supported"},
		{"required variable", "services:\n  db:\n    image: ${TAG:?set the tag}\n", "x.yaml:3: service db image: required variable TAG is not set: set the tag"},
		{"bad duration", "services:\n  db:\n    image: x\n    healthcheck:\n      test: true\n      interval: soon\n", "x.yaml:6: service db healthcheck.interval: \"soon\" is not a duration"},
		{"unclosed quote", "services:\n  db:\n    image: x\n    command: echo 'hi\n", "x.yaml:4: service db command: unclosed '"},
		// Compose refuses it; taken, every trial failed at the engine
		// (the twenty-second attacker's 7).
		{"bad volume name", "services:\n  main:\n    volumes: [\"data@x:/data\"]\nvolumes:\n  data@x: {}\n", "x.yaml:3: service main volumes: volume \"data@x\": a compose volume's name is letters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := composeTask(t.TempDir())
			p := filepath.Join(t.TempDir(), "x.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := applyCompose(&task, p, filepath.Dir(p), harborHarness(&task, filepath.Dir(p), ""))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v\nwant it to contain %q", err, tc.err)
			}
		})
	}
}

// Single-service wrappers: what main's compose settings become.
func TestComposeMainSettings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile.dev"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := `x-common: &common
  environment:
    FROM_ANCHOR: "1"
services:
  main:
    <<: *common
    build:
      context: .
      dockerfile: Dockerfile.dev
      args:
        PY: "3.12"
    image: ${MAIN_IMAGE_NAME}
    working_dir: /srv/app
    hostname: taskhost
    entrypoint: /bin/sh -c
    command: ["exec sleep infinity"]
    mem_limit: 3g
    cpus: 1.5
    volumes:
      - ./data:/srv/data
      - scratch:/tmp/scratch
    healthcheck:
      test: curl -f http://localhost/ || exit 1
      retries: 3
`
	p := filepath.Join(dir, composeFile)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	task := composeTask(dir)
	task.Resources.Defaulted = []string{"memory", "cpus", "pids_limit"}
	files, err := applyCompose(&task, p, dir, harborHarness(&task, dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	if task.Build.Dockerfile != "Dockerfile.dev" || task.Build.Args["PY"] != "3.12" || task.Image != "" {
		t.Errorf("build %+v image %q", task.Build, task.Image)
	}
	if task.WorkDir != "/srv/app" || !slices.Equal(task.IdleCommand, []string{"/bin/sh", "-c", "exec sleep infinity"}) {
		t.Errorf("workdir %q idle %q", task.WorkDir, task.IdleCommand)
	}
	// The container's own host name, as compose sets it (the twentieth
	// attacker's 5: it was only an alias, and `hostname` said the id).
	if task.Hostname != "taskhost" {
		t.Errorf("hostname %q, want taskhost", task.Hostname)
	}
	if !hasNote(deviations(task), "service main entrypoint not set as the entrypoint") {
		t.Errorf("deviations %q", task.Deviations)
	}
	if task.Resources.MemoryBytes != 3<<30 || task.Resources.CPUs != 1.5 || !slices.Equal(task.Resources.Defaulted, []string{"pids_limit"}) {
		t.Errorf("resources %+v: main's compose limits are the spec", task.Resources)
	}
	if !slices.Equal(task.Env, []string{"FROM_ANCHOR=1"}) {
		t.Errorf("env %v (merge key)", task.Env)
	}
	if len(files) != 1 || files[0].To != "/srv/data" {
		t.Errorf("files %+v", files)
	}
	if !slices.Equal(task.Volumes, []model.VolumeMount{{Volume: "scratch", Target: "/tmp/scratch"}}) {
		t.Errorf("volumes %+v", task.Volumes)
	}
	if task.Healthcheck == nil || !slices.Equal(task.Healthcheck.Test, []string{"CMD-SHELL", "curl -f http://localhost/ || exit 1"}) || task.Healthcheck.Retries != 3 {
		t.Errorf("healthcheck %+v", task.Healthcheck)
	}
	// An inline Dockerfile needs no file; a build key that changes what is
	// built but is not honoured is listed.
	task = composeTask(dir)
	if err := os.WriteFile(p, []byte("services:\n  db:\n    build:\n      context: data\n      dockerfile_inline: |\n        FROM scratch\n      secrets: [token]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	if b := task.Sidecars[0].Build; b == nil || b.Inline != "FROM scratch\n" || b.Context != filepath.Join(dir, "data") {
		t.Errorf("inline build %+v", b)
	}
	if d := deviations(task); len(d) != 2 || !strings.HasPrefix(d[0], "service db memory bounded at 1GiB: the compose file gives it no memory limit") || d[1] != "service db build.secrets not honoured" {
		t.Errorf("deviations %q", task.Deviations)
	}
	// network_mode none on main is no network, as in the harness.
	task = composeTask(dir)
	task.Network = "bridge"
	if err := os.WriteFile(p, []byte("services:\n  main:\n    network_mode: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	if task.Network != "none" || len(task.Deviations) != 0 {
		t.Errorf("network %q deviations %q", task.Network, task.Deviations)
	}
	// A variable naming one of the task's own secrets passes it on.
	task = composeTask(dir)
	task.PassEnv = []string{"JUDGE_KEY=HOST_JUDGE"}
	if err := os.WriteFile(p, []byte("services:\n  main:\n    environment:\n      - API_KEY=${JUDGE_KEY}\n      - JUDGE_KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(task.PassEnv, []string{"JUDGE_KEY=HOST_JUDGE", "API_KEY=HOST_JUDGE"}) || len(task.Env) != 0 || len(task.Deviations) != 0 {
		t.Errorf("pass %v env %v deviations %q", task.PassEnv, task.Env, task.Deviations)
	}
	// terminal-bench builds only what its compose says: an image without a
	// build is what runs, even with a Dockerfile beside it.
	task = composeTask(dir)
	if err := os.WriteFile(p, []byte("services:\n  client:\n    image: python:3.11\n    container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCompose(&task, p, dir, tbHarness(&task)); err != nil {
		t.Fatal(err)
	}
	if task.Image != "python:3.11" || task.Build != nil {
		t.Errorf("terminal-bench image %q build %v", task.Image, task.Build)
	}
	// A prebuilt image named in main without a build replaces the Dockerfile's.
	task = composeTask(dir)
	task.Image = "pinned:1"
	if err := os.WriteFile(p, []byte("services:\n  main:\n    image: other:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "pinned:1")); err != nil {
		t.Fatal(err)
	}
	if task.Image != "other:2" || task.Build != nil {
		t.Errorf("image %q build %v", task.Image, task.Build)
	}
}

func TestInterpolate(t *testing.T) {
	vars := map[string]string{"A": "a", "EMPTY": ""}
	tests := []struct{ in, want, unset, err string }{
		{in: "plain", want: "plain"},
		{in: "$A-${A}", want: "a-a"},
		{in: "$$A costs $$5", want: "$A costs $5"},
		{in: "${NOPE:-dflt}", want: "dflt", unset: "NOPE(defaulted)"},
		{in: "${EMPTY:-dflt}|${EMPTY-dflt}", want: "dflt|"},
		{in: "${NOPE:-${A}/x}", want: "a/x", unset: "NOPE(defaulted)"},
		{in: "${A:+alt}|${NOPE:+alt}|${EMPTY+alt}", want: "alt||alt", unset: "NOPE(defaulted)"},
		{in: "${NOPE:-x}$NOPE", want: "x", unset: "NOPE"},
		{in: "$NOPE${NOPE:-x}", want: "x", unset: "NOPE"},
		{in: "x${NOPE}y$NOPE2", want: "xy", unset: "NOPE,NOPE2"},
		{in: "${NOPE:?needed here}", err: "required variable NOPE is not set: needed here"},
		{in: "${A", err: "unclosed ${"},
		{in: "${1A}", err: "not a variable name"},
		{in: "${A:x}", err: "unknown operator"},
		{in: "cost: 5$", want: "cost: 5$"},
	}
	for _, tc := range tests {
		unset := map[string]bool{}
		got, err := interpolate(tc.in, vars, unset)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		var names []string
		for n, bare := range unset {
			if !bare {
				n += "(defaulted)"
			}
			names = append(names, n)
		}
		slices.Sort(names)
		if strings.Join(names, ",") != tc.unset {
			t.Errorf("%q: unset %v, want %q", tc.in, names, tc.unset)
		}
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"python gateway.py", []string{"python", "gateway.py"}},
		{`sh -c "service postgresql start && sleep infinity"`, []string{"sh", "-c", "service postgresql start && sleep infinity"}},
		{`echo 'a  b' c\ d "q\"x"`, []string{"echo", "a  b", "c d", `q"x`}},
		{"  spaced   out  ", []string{"spaced", "out"}},
		{`""`, []string{""}},
	}
	for _, tc := range tests {
		got, err := splitWords(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// FuzzCompose: no compose file makes the decoder panic.
func FuzzCompose(f *testing.F) {
	for _, d := range []string{"o11y-bench", "signalforge", "tb-db"} {
		if b, err := os.ReadFile(filepath.Join("testdata/compose", d, composeFile)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("services:\n  a: &x\n    <<: *x\n"))
	f.Add([]byte(mergeBomb(9)))
	f.Fuzz(func(t *testing.T, data []byte) {
		task := composeTask(".")
		_, _ = parseCompose("fuzz.yaml", data, ".", harborHarness(&task, ".", ""))
	})
}

// The container ports a service's ports: and expose: name, kept for a
// backend whose services share one network namespace (a pod): the host
// side of a mapping is not the container's.
func TestComposePorts(t *testing.T) {
	dir := t.TempDir()
	yaml := `services:
  main:
    image: ${MAIN_IMAGE_NAME}
    ports: ["3000"]
  api:
    image: api:1
    ports:
      - "127.0.0.1:8080:80"
      - "9000-9001:7000-7001/udp"
      - target: 5432
        published: 15432
    expose: ["6379", "80"]
`
	p := filepath.Join(dir, composeFile)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	task := composeTask(dir)
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(task.Ports, []string{"3000/tcp"}) {
		t.Errorf("main's ports %q", task.Ports)
	}
	if len(task.Sidecars) != 1 || !slices.Equal(task.Sidecars[0].Ports, []string{"80/tcp", "7000/udp", "7001/udp", "5432/tcp", "6379/tcp"}) {
		t.Errorf("api's ports %+v", task.Sidecars)
	}
	for _, bad := range []string{"x", "0", "80-70", "1-5000", "8080:"} {
		if _, err := containerPorts(bad); err == nil {
			t.Errorf("containerPorts(%q) took it", bad)
		}
	}
}

// env_file as Docker Compose reads it (compose-go's dotenv and its
// resolveEnvironment): under the service's environment whatever the order
// of the keys, comments, quotes and escapes as compose's parser has them,
// a bare NAME the harness does not set left out, ${VAR} from the
// service's environment and the file's earlier lines, later files over
// earlier ones, a missing file an error unless required: false. Each
// value below was checked against `docker compose config` semantics (the
// nineteenth attacker's 1: an env_file after environment: overrode it).
func TestComposeEnvFileAsCompose(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"task.env": "MODE=default\nCOMMENTED=fast # a comment\nHASH=a#b\nTAB=\"a\\tb\"\nSINGLE='a\\tb $BASE'\n" +
			"BARE\nexport EXPORTED=yes\nUSES=${BASE}/bin\nFIRST=1\nSECOND=${FIRST}2\nOVER=first\nEMPTY=\n",
		"more.env":   "OVER=second\n",
		"Dockerfile": "FROM scratch\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	yaml := `services:
  main:
    build: .
    environment:
      MODE: override
      BASE: /opt
    env_file:
      - task.env
      - path: more.env
      - path: missing.env
        required: false
`
	p := filepath.Join(dir, composeFile)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	task := composeTask(dir)
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range task.Env {
		k, v, _ := strings.Cut(e, "=")
		got[k] = v
	}
	for k, want := range map[string]string{
		"MODE": "override", "BASE": "/opt", "COMMENTED": "fast", "HASH": "a#b", "TAB": "a\tb",
		"SINGLE": `a\tb $BASE`, "EXPORTED": "yes", "USES": "/opt/bin", "SECOND": "12", "OVER": "second", "EMPTY": "",
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %q (set %v), want %q", k, v, ok, want)
		}
	}
	if _, ok := got["BARE"]; ok {
		t.Errorf("BARE is set (%q): compose leaves a bare name the harness does not set out", got["BARE"])
	}
	if n := strings.Count(strings.Join(task.Env, "\n"), "MODE="); n != 1 {
		t.Errorf("MODE appears %d times in %q", n, task.Env)
	}

	// A required file that is missing refuses the task, naming it.
	if err := os.WriteFile(p, []byte("services:\n  main:\n    build: .\n    env_file: gone.env\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task = composeTask(dir)
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err == nil || !strings.Contains(err.Error(), "gone.env") {
		t.Errorf("a missing env_file: %v, want an error naming gone.env", err)
	}
}

// Unquoted numbers in environment: and a build's args: are what Docker
// Compose v2 makes of them: YAML's number, written back (compose-go's
// loader, v2.16.2, gave each of these; the twentieth attacker's 6).
// Quoted ones and a list's NAME=value are text.
func TestComposeNumbersAsComposeV2(t *testing.T) {
	dir := t.TempDir()
	yaml := `services:
  main:
    build:
      context: .
      args:
        V: 1.20
        Q: "1.20"
    environment:
      PY_VERSION: 3.10
      INT: 010
      BIG: 1e3
      HEX: 0x1F
      B: yes
      T: true
      ONE: 1.0
      QUOTED: '3.10'
`
	p := filepath.Join(dir, composeFile)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task := composeTask(dir)
	if _, err := applyCompose(&task, p, dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	want := []string{"PY_VERSION=3.1", "INT=8", "BIG=1000", "HEX=31", "B=yes", "T=true", "ONE=1", "QUOTED=3.10"}
	for _, w := range want {
		if !slices.Contains(task.Env, w) {
			t.Errorf("env %q: want %s", task.Env, w)
		}
	}
	if task.Build.Args["V"] != "1.2" || task.Build.Args["Q"] != "1.20" {
		t.Errorf("args %v: want V=1.2 (unquoted), Q=1.20 (quoted)", task.Build.Args)
	}
}

// Every variable a compose file takes from the harness's environment is a
// deviation the audit lists: a defaulted ${V:-x}, a build argument given
// by name alone, an env_file's ${V} and its bare NAME line. The audit
// named a bare $V alone (the twenty-fourth attacker's).
func TestComposeVariablesFromTheHarnessAreListed(t *testing.T) {
	dir := t.TempDir()
	yaml := `services:
  main:
    build:
      context: .
      args:
        - TOKEN
        - PY=3.12
    environment:
      MODE: ${MODE:-fast}
    env_file: vars.env
`
	task := composedTask(t, dir, map[string]string{composeFile: yaml, "Dockerfile": "FROM scratch\n", "vars.env": "URL=${API_URL}\nLEVEL=${LEVEL-info}\nSECRET\n"})
	d := deviations(task)
	for _, want := range []string{
		"compose variable MODE defaulted",
		"compose variable LEVEL defaulted",
		"compose variable API_URL unset",
		"service main build.args not given: TOKEN: the harness takes them from its own environment",
		"service main environment not given: SECRET",
	} {
		if !hasNote(d, want) {
			t.Errorf("no deviation %q in\n%s", want, strings.Join(d, "\n"))
		}
	}
	if task.Build.Args["PY"] != "3.12" || len(task.Build.Args) != 1 {
		t.Errorf("build args %v", task.Build.Args)
	}
}

// A named volume's name (compose shares that one volume across runs) and
// a deploy key other than resources (replicas: 12 ran one container) are
// listed: the audit called such a task faithful (the twenty-fifth
// attacker's 6).
func TestComposeVolumeNameAndReplicasAreListed(t *testing.T) {
	dir := t.TempDir()
	yaml := "services:\n  main:\n    volumes: [\"data:/data\"]\n  db:\n    image: db:1\n    deploy:\n      replicas: 12\n      resources:\n        limits:\n          memory: 64m\nvolumes:\n  data:\n    name: shared-decoy\n"
	d := deviations(composedTask(t, dir, map[string]string{composeFile: yaml, "Dockerfile": "FROM scratch\n"}))
	for _, want := range []string{"compose volume data settings not used: external, name,", "service db deploy.replicas not honoured"} {
		if !hasNote(d, want) {
			t.Errorf("no deviation %q in\n%s", want, strings.Join(d, "\n"))
		}
	}
	if hasNote(d, "deploy.resources") {
		t.Errorf("resources are honoured:\n%s", strings.Join(d, "\n"))
	}
}

// composedTask writes files into dir and reads its compose file as a
// Harbor task's.
func composedTask(t *testing.T, dir string, files map[string]string) model.Task {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	task := composeTask(dir)
	if _, err := applyCompose(&task, filepath.Join(dir, composeFile), dir, harborHarness(&task, dir, "")); err != nil {
		t.Fatal(err)
	}
	return task
}

// What compose does that headroom does not is listed, so the audit does
// not call the task faithful (the twenty-eighth attacker's 1–3): networks
// that keep two services apart (here every service reaches every
// other), a restart policy (a service that exits stays down), a terminal
// or open stdin (a shell kept alive by one exits). Networks every
// service shares, restart: "no" and tty: false change nothing and are
// not listed.
func TestComposeNetworksRestartAndTTYAreListed(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want, not  []string
	}{
		{"apart", "services:\n  main:\n    networks: [front]\n  side:\n    image: s:1\n    networks: [back]\nnetworks:\n  front: {}\n  back: {}\n",
			[]string{"compose networks not kept apart: services main (front) and side (back) share no network under compose"}, nil},
		{"apart by mapping, main on the default", "services:\n  side:\n    image: s:1\n    networks:\n      back:\n        aliases: [b]\nnetworks:\n  back: {}\n",
			[]string{"services main (default) and side (back) share no network"}, nil},
		{"shared", "services:\n  main:\n    networks: [front]\n  side:\n    image: s:1\n    networks: [front, back]\n  db:\n    image: d:1\n    networks: [front]\n",
			nil, []string{"compose networks"}},
		{"restart and tty", "services:\n  side:\n    image: s:1\n    restart: always\n    tty: true\n    stdin_open: true\n  db:\n    image: d:1\n    restart: \"no\"\n    tty: false\n",
			[]string{"service side restart: always not honoured", "service side tty not honoured", "service side stdin_open not honoured"},
			[]string{"service db restart", "service db tty"}},
	} {
		d := deviations(composedTask(t, t.TempDir(), map[string]string{composeFile: c.yaml, "Dockerfile": "FROM scratch\n"}))
		for _, want := range c.want {
			if !hasNote(d, want) {
				t.Errorf("%s: no deviation %q in\n%s", c.name, want, strings.Join(d, "\n"))
			}
		}
		for _, not := range c.not {
			if hasNote(d, not) {
				t.Errorf("%s: a deviation %q in\n%s", c.name, not, strings.Join(d, "\n"))
			}
		}
	}
}

// terminal-bench runs `docker compose -f <task>/docker-compose.yaml`,
// whose project directory is the task's: compose reads the .env there,
// for interpolation and for a bare NAME, under the harness's own
// variables. A task taking GREETING from its .env ran with it empty, and
// the audit blamed the harness's environment (the twenty-eighth
// attacker's 4).
func TestTerminalBenchReadsTheProjectsDotEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hello-dotenv")
	if err := os.CopyFS(dir, os.DirFS("../examples/tasks/hello-old")); err != nil {
		t.Fatal(err)
	}
	compose := "services:\n  client:\n    build:\n      dockerfile: Dockerfile\n    command: [\"sh\", \"-c\", \"sleep infinity\"]\n    environment:\n      - GREETING=${GREETING_FROM_DOTENV}\n      - BARE\n      - PREFIX=${T_BENCH_TASK_DOCKER_NAME_PREFIX}\n"
	dotenv := "GREETING_FROM_DOTENV=\"Hello, world!\"\nBARE=from-dotenv # a comment\nT_BENCH_TASK_DOCKER_NAME_PREFIX=not-the-harness's\n"
	for name, text := range map[string]string{"docker-compose.yaml": compose, ".env": dotenv} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(l.Task.Env, "\n")
	for _, want := range []string{"GREETING=Hello, world!", "BARE=from-dotenv", "PREFIX=tb__"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	for _, d := range deviations(l.Task) {
		if strings.Contains(d, "GREETING") || strings.Contains(d, "BARE") || strings.Contains(d, "compose variable") {
			t.Errorf("deviation %q; want none of the .env's: compose reads it too", d)
		}
	}
}
