package taskfile

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// A task file's capabilities that reach past the container are refused
// unless allowed by name, at the line that asks for them; Docker's
// defaults and the harmless ones are not.
func TestCapabilityRule(t *testing.T) {
	const head = "[task]\nname = \"c/x\"\n[environment]\nimage = \"alpine\"\n"
	const tail = "[verifier]\ncommand = [\"true\"]\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  name = \"s\"\n  command = [\"true\"]\n"
	for _, tc := range []struct {
		caps    string
		allowed []string
		refused []string // "" none
	}{
		{caps: `[]`},
		{caps: `["NET_BIND_SERVICE", "SYS_CHROOT", "MKNOD", "IPC_LOCK"]`},
		// Real-time scheduling takes CPU from the trials beside it.
		{caps: `["SYS_NICE"]`, refused: []string{"SYS_NICE"}},
		{caps: `["DAC_READ_SEARCH"]`, refused: []string{"DAC_READ_SEARCH"}},
		{caps: `["cap_sys_admin"]`, refused: []string{"SYS_ADMIN"}},
		{caps: `["SYS_PTRACE", "NET_ADMIN"]`, allowed: []string{"NET_ADMIN"}, refused: []string{"SYS_PTRACE"}},
		{caps: `["SYS_PTRACE"]`, allowed: []string{"SYS_PTRACE"}},
		{caps: `["ALL"]`, refused: []string{"ALL"}},
		{caps: `["BPF", "PERFMON", "SYS_MODULE", "SYS_RAWIO", "SYS_TIME", "SYSLOG", "MAC_ADMIN", "MAC_OVERRIDE", "SYS_BOOT", "SYS_RESOURCE"]`,
			refused: []string{"BPF", "PERFMON", "SYS_MODULE", "SYS_RAWIO", "SYS_TIME", "SYSLOG", "MAC_ADMIN", "MAC_OVERRIDE", "SYS_BOOT", "SYS_RESOURCE"}},
	} {
		t.Run(tc.caps, func(t *testing.T) {
			data := head + "memory = \"64M\"\ncapabilities = " + tc.caps + "\n" + tail
			l, err := Parse("tasks/x.toml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			task := l.Task
			err = task.CheckCapabilities(tc.allowed)
			if len(tc.refused) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("not refused; capabilities %v", task.Capabilities)
			}
			for _, c := range tc.refused {
				if !strings.Contains(err.Error(), "tasks/x.toml:6: "+c) || !strings.Contains(err.Error(), "--allow-capability "+c) {
					t.Errorf("%q does not name tasks/x.toml:6 and the flag for %s", err, c)
				}
			}
			for _, c := range tc.allowed {
				if strings.Contains(err.Error(), "--allow-capability "+c) {
					t.Errorf("%q asks to allow %s, which is allowed", err, c)
				}
			}
			// audit: a deviation in every profile.
			for _, p := range model.Profiles {
				task.SetProfile(p)
				n := 0
				for _, d := range task.AllDeviations() {
					if strings.HasPrefix(d.What, "capability ") && strings.HasSuffix(d.What, " reaches the host") {
						n++
					}
				}
				if n != len(task.HostCapabilityGrants()) {
					t.Errorf("profile %s: %d capability deviations for %v", p, n, task.HostCapabilityGrants())
				}
			}
		})
	}
}

// Compose cap_add: the main service's join the task's capabilities, a
// sidecar's its own; either is refused, at its line, unless allowed; and
// a Harbor task.toml's [environment] capabilities, headroom's own key,
// is ignored there (Harbor does not read it), at its line.
func TestComposeCapAdd(t *testing.T) {
	dir := t.TempDir()
	write := func(p, body string) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("task.toml", "schema_version = \"1.1\"\n[task]\nname = \"c/compose\"\n[environment]\nmemory_mb = 64\ncapabilities = [\"SYS_NICE\", \"BPF\"]\n")
	write("instruction.md", "x\n")
	write("environment/Dockerfile", "FROM alpine\n")
	write("tests/test.sh", "#!/bin/sh\n")
	write("environment/docker-compose.yaml", "services:\n  main:\n    build:\n      context: .\n    cap_add: [NET_RAW, SYS_PTRACE]\n  db:\n    image: postgres\n    cap_add:\n      - SYS_NICE\n      - CAP_SYS_ADMIN\n")
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	if !slices.Contains(task.Capabilities, "SYS_PTRACE") || !slices.Contains(task.Capabilities, "NET_RAW") {
		t.Errorf("main's capabilities %v", task.Capabilities)
	}
	if len(task.Sidecars) != 1 || !slices.Equal(task.Sidecars[0].Capabilities, []string{"SYS_NICE", "SYS_ADMIN"}) {
		t.Errorf("sidecars %+v", task.Sidecars)
	}
	if got := task.HostCapabilityGrants(); !slices.Equal(got, []string{"SYS_PTRACE", "SYS_NICE", "SYS_ADMIN"}) {
		t.Errorf("host capabilities %v", got)
	}
	err = task.CheckCapabilities([]string{"BPF", "SYS_NICE"})
	compose := filepath.Join(dir, "environment", "docker-compose.yaml")
	for _, want := range []string{compose + ":5 (service main cap_add): SYS_PTRACE", compose + ":10 (service db cap_add): SYS_ADMIN", "--allow-capability SYS_PTRACE --allow-capability SYS_ADMIN"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %v does not say %q", err, want)
		}
	}
	if err := task.CheckCapabilities([]string{"BPF", "SYS_NICE", "SYS_PTRACE"}); err == nil || strings.Contains(err.Error(), "SYS_PTRACE") {
		t.Errorf("with SYS_PTRACE allowed: %v", err)
	}
	if !slices.Contains(l.Ignored, "environment.capabilities") || !slices.ContainsFunc(task.AllDeviations(), func(d model.Deviation) bool {
		return strings.HasPrefix(d.Detail, filepath.Join(dir, "task.toml")+":6: [environment] capabilities is headroom's own")
	}) {
		t.Errorf("task.toml's capabilities: ignored %v, deviations %v", l.Ignored, task.AllDeviations())
	}
	if !slices.ContainsFunc(task.AllDeviations(), func(d model.Deviation) bool { return d.What == "capability SYS_ADMIN reaches the host" }) {
		t.Errorf("deviations %v", task.AllDeviations())
	}
}

// A task loaded twice from the same files has the same fingerprint, so a
// resume of an unedited task is never refused: every kind of task the
// testdata holds (headroom TOML, Harbor and terminal-bench directories,
// compose environments).
func TestFingerprintStable(t *testing.T) {
	var dirs []string
	for _, g := range []string{"testdata/harbor/*", "testdata/tbdirs/*", "testdata/tb1dirs/*", "testdata/compose/*"} {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	files, _ := filepath.Glob("testdata/tasks/good/*.toml")
	n := 0
	for _, p := range append(dirs, files...) {
		load := func() (model.Task, bool) {
			var l Loaded
			var err error
			if strings.HasSuffix(p, ".toml") {
				l, err = LoadFile(p)
			} else {
				l, err = LoadTaskDir(p)
			}
			return l.Task, err == nil
		}
		a, ok := load()
		if !ok {
			continue
		}
		b, _ := load()
		n++
		if fa, fb := store.TaskFingerprint(a), store.TaskFingerprint(b); !maps.Equal(fa, fb) {
			t.Errorf("%s: fingerprints differ between two loads: %v %v", p, fa, fb)
		}
		if ch := store.NewTaskEntry(a, nil, 2).Changes(b); len(ch) > 0 {
			t.Errorf("%s: changes %v between two loads", p, ch)
		}
	}
	if n < 10 {
		t.Errorf("only %d tasks loaded", n)
	}
}
