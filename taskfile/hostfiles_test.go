package taskfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// hostileTaskDir makes a Harbor task directory beside a host file the
// task must not reach, and returns the directory and the host file.
func hostileTaskDir(t *testing.T) (dir, secret string) {
	t.Helper()
	root := t.TempDir()
	secret = filepath.Join(root, "secret")
	write(t, secret, "HOST SECRET\n")
	os.Chmod(secret, 0o600)
	dir = filepath.Join(root, "task")
	write(t, filepath.Join(dir, "task.toml"), "[task]\nname = \"hostile/links\"\n[environment]\nmemory_mb = 64\n")
	write(t, filepath.Join(dir, "instruction.md"), "read what you can\n")
	write(t, filepath.Join(dir, "environment", "Dockerfile"), "FROM scratch\n")
	write(t, filepath.Join(dir, "tests", "test.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(dir, "solution", "solve.sh"), "#!/bin/sh\n")
	return dir, secret
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, at string) {
	t.Helper()
	os.RemoveAll(at)
	if err := os.Symlink(target, at); err != nil {
		t.Fatal(err)
	}
}

// Every path headroom copies in or reads for a task is refused when a
// symbolic link takes it out of the task directory, as ../ and absolute
// sources are: a compose bind mount is not mounted (and says why), an
// env_file is not read, anything else refuses the task naming the path.
func TestLinksOutOfTheTaskDirectory(t *testing.T) {
	compose := func(volume string) string {
		return "services:\n  main:\n    build:\n      context: .\n    volumes:\n      - " + volume + "\n"
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir, secret string)
		// note is a deviation that must be recorded; err an error the load
		// must end with (one of them).
		note, err string
	}{
		{"compose bind mount of a link to a host file", func(t *testing.T, dir, secret string) {
			link(t, secret, filepath.Join(dir, "environment", "leak"))
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), compose("./leak:/mnt/leak"))
		}, "./leak:/mnt/leak: ./leak is a symbolic link out of the task directory", ""},
		{"compose bind mount of a directory under a link", func(t *testing.T, dir, secret string) {
			link(t, filepath.Dir(secret), filepath.Join(dir, "environment", "up"))
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), compose("./up:/mnt/up"))
		}, "./up:/mnt/up: ./up is a symbolic link out of the task directory", ""},
		{"compose bind mount through a relative link", func(t *testing.T, dir, secret string) {
			link(t, "../../secret", filepath.Join(dir, "environment", "rel"))
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), compose("./rel:/mnt/rel"))
		}, "./rel is a symbolic link out of the task directory", ""},
		{"compose bind mount ../", func(t *testing.T, dir, secret string) {
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), compose("../../secret:/mnt/s"))
		}, "../../secret:/mnt/s: ../../secret is outside the task directory", ""},
		{"env_file through a link", func(t *testing.T, dir, secret string) {
			link(t, secret, filepath.Join(dir, "environment", "app.env"))
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), "services:\n  main:\n    build: .\n    env_file: app.env\n")
		}, "app.env is a symbolic link out of the task directory", ""},
		{"env_file absolute", func(t *testing.T, dir, secret string) {
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), "services:\n  main:\n    build: .\n    env_file: "+secret+"\n")
		}, "is outside the task directory", ""},
		{"build context outside", func(t *testing.T, dir, secret string) {
			write(t, filepath.Join(filepath.Dir(dir), "Dockerfile"), "FROM scratch\n")
			write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), "services:\n  main:\n    build:\n      context: ../..\n")
		}, "", "is outside the task directory"},
		{"environment/ a link out", func(t *testing.T, dir, secret string) {
			other := filepath.Join(filepath.Dir(dir), "env")
			write(t, filepath.Join(other, "Dockerfile"), "FROM scratch\n")
			link(t, other, filepath.Join(dir, "environment"))
		}, "", "environment is a symbolic link out of the task directory"},
		{"Dockerfile a link out", func(t *testing.T, dir, secret string) {
			link(t, secret, filepath.Join(dir, "environment", "Dockerfile"))
		}, "", "Dockerfile is a symbolic link out of the task directory"},
		{"tests/ a link out", func(t *testing.T, dir, secret string) {
			other := filepath.Join(filepath.Dir(dir), "tests")
			write(t, filepath.Join(other, "test.sh"), "#!/bin/sh\n")
			link(t, other, filepath.Join(dir, "tests"))
		}, "", "tests is a symbolic link out of the task directory"},
		{"solution/ a link to a host directory", func(t *testing.T, dir, secret string) {
			other := filepath.Join(filepath.Dir(dir), "sol")
			write(t, filepath.Join(other, "solve.sh"), "#!/bin/sh\n")
			link(t, other, filepath.Join(dir, "solution"))
		}, "", "solution is a symbolic link out of the task directory"},
		// Where the link leads holds no solve.sh (or cannot be read):
		// the oracle was simply missing, and validate said ok.
		{"solution/ a link to /root", func(t *testing.T, dir, secret string) {
			link(t, "/root", filepath.Join(dir, "solution"))
		}, "", "solution is a symbolic link out of the task directory"},
		{"solution/ a link to a host directory without solve.sh", func(t *testing.T, dir, secret string) {
			link(t, filepath.Dir(secret), filepath.Join(dir, "solution"))
		}, "", "solution is a symbolic link out of the task directory"},
		{"solution/ a link to nothing outside", func(t *testing.T, dir, secret string) {
			link(t, "../../nowhere", filepath.Join(dir, "solution"))
		}, "", "solution is a symbolic link out of the task directory"},
		{"tests/ a link to /root", func(t *testing.T, dir, secret string) {
			link(t, "/root", filepath.Join(dir, "tests"))
		}, "", "tests is a symbolic link out of the task directory"},
		{"instruction.md a link to a host file", func(t *testing.T, dir, secret string) {
			link(t, secret, filepath.Join(dir, "instruction.md"))
		}, "", "instruction.md is a symbolic link out of the task directory"},
		{"task.toml a link to a host file", func(t *testing.T, dir, secret string) {
			link(t, secret, filepath.Join(dir, "task.toml"))
		}, "", "task.toml is a symbolic link out of the task directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, secret := hostileTaskDir(t)
			c.setup(t, dir, secret)
			l, err := LoadTaskDir(dir)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "copy the file into the task") {
					t.Fatalf("load = %v; want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			for _, d := range l.Task.Deviations {
				notes = append(notes, d.What+": "+d.Detail)
			}
			if !strings.Contains(strings.Join(notes, "\n"), c.note) {
				t.Errorf("deviations\n%s\nwant one with %q", strings.Join(notes, "\n"), c.note)
			}
			// Nothing the task copies in comes from the host file.
			for _, u := range allUploads(l.Task) {
				if u.From == secret || strings.HasPrefix(u.From, filepath.Dir(secret)+string(filepath.Separator)) && !strings.HasPrefix(u.From, dir) {
					t.Errorf("upload %+v reaches the host file", u)
				}
			}
			for _, kv := range l.Task.Env {
				if strings.Contains(kv, "HOST SECRET") {
					t.Errorf("the host file's text is in the environment: %q", kv)
				}
			}
		})
	}
}

// A link that stays inside the task directory is followed, and what is
// copied in is its target's resolved path.
func TestLinksInsideTheTaskDirectoryAreFollowed(t *testing.T) {
	dir, _ := hostileTaskDir(t)
	write(t, filepath.Join(dir, "environment", "data", "config.json"), "{}\n")
	link(t, "data/config.json", filepath.Join(dir, "environment", "config"))
	write(t, filepath.Join(dir, "environment", "docker-compose.yaml"), "services:\n  main:\n    build: .\n    volumes:\n      - ./config:/etc/app.json\n")
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(dir, "environment", "data", "config.json"))
	found := false
	for _, u := range allUploads(l.Task) {
		if u.From == real && u.To == "/etc" && u.Name == "app.json" {
			found = true
		}
	}
	if !found {
		t.Errorf("the in-task link's target is not copied in as /etc/app.json: %+v", allUploads(l.Task))
	}
}

// A task file that is not a regular file (a FIFO never ends) or is over
// the size bound is refused at once, naming it.
func TestTaskFilesBounded(t *testing.T) {
	dir, _ := hostileTaskDir(t)
	os.Remove(filepath.Join(dir, "instruction.md"))
	if err := syscall.Mkfifo(filepath.Join(dir, "instruction.md"), 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := LoadTaskDir(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO instruction.md: %v", err)
	}
	dir, _ = hostileTaskDir(t)
	write(t, filepath.Join(dir, "task.toml"), "[task]\nname = \"big\"\n# "+strings.Repeat("x", MaxTaskFileBytes)+"\n")
	if _, err := LoadTaskDir(dir); err == nil || !strings.Contains(err.Error(), "task.toml: larger than 1MiB") {
		t.Errorf("an oversize task.toml: %v", err)
	}
}

func allUploads(t model.Task) []model.Upload {
	var out []model.Upload
	out = append(out, t.Verifier.Files...)
	for _, sc := range t.Sidecars {
		out = append(out, sc.Files...)
	}
	for _, p := range t.Phases {
		out = append(out, p.Verifier.Files...)
		for _, s := range p.Setup {
			out = append(out, s.Files...)
		}
	}
	for _, a := range t.Agents {
		for _, s := range a.Steps {
			out = append(out, s.Files...)
		}
	}
	return out
}

// A name is one line of printable text: one holding an escape sequence,
// an OSC title, a newline, a C1 control or a byte that is not UTF-8 is
// refused, naming the field and quoting the name safely.
func TestNamesMustBePrintable(t *testing.T) {
	for name, want := range map[string]string{
		`hostile/esc\u001b[2J`:      `[task] name "hostile/esc\x1b[2J" holds the control character U+001B`,
		`t\u001b]0;pwned\u0007`:     "U+001B",
		`row\nforged row  1  64MiB`: `"row\nforged row  1  64MiB" holds the control character U+000A`,
		`c1\u009b2J`:                "U+009B",
		`bidi\u202eevil`:            "U+202E",
		`tab\there`:                 "U+0009",
	} {
		dir, _ := hostileTaskDir(t)
		write(t, filepath.Join(dir, "task.toml"), "[task]\nname = \""+name+"\"\n[environment]\nmemory_mb = 64\n")
		_, err := LoadTaskDir(dir)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "one line of printable text") {
			t.Errorf("name %s: %v; want %q", name, err, want)
		}
	}
	dir, _ := hostileTaskDir(t)
	write(t, filepath.Join(dir, "task.toml"), "[task]\nname = \"fine/ünïcödé ✓\"\n[environment]\nmemory_mb = 64\n")
	if _, err := LoadTaskDir(dir); err != nil {
		t.Errorf("a printable Unicode name: %v", err)
	}
}

// A solution/ that is a link staying inside the task directory is the
// task's oracle, as before.
func TestASolutionLinkInsideTheTaskIsTheOracle(t *testing.T) {
	dir, _ := hostileTaskDir(t)
	write(t, filepath.Join(dir, "reference", "solve.sh"), "#!/bin/sh\n")
	link(t, "reference", filepath.Join(dir, "solution"))
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Task.Agent(AgentOracle); !ok {
		t.Errorf("no oracle: agents %v", l.Task.AgentNames())
	}
}

// An environment/Dockerfile that is a directory is refused at load,
// naming it (the sixteenth attacker's 10): `tasks validate` said ok and
// every trial was an infra-error from the engine's build.
func TestDockerfileMustBeAFile(t *testing.T) {
	dir := harborDir(t, "version = \"1.0\"\n[task]\nname = \"d/dir\"\n")
	if err := os.MkdirAll(filepath.Join(dir, "environment", "Dockerfile"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTaskDir(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("environment", "Dockerfile")+" is not a regular file") {
		t.Errorf("a directory as environment/Dockerfile: %v", err)
	}
}

// A FIFO among a step's files (solution/solve.sh made one) is refused at
// load, naming it, as one at task.toml is: the copy left it out, and the
// trial said "No such file or directory" while validate said ok (the
// thirty-fourth attacker's 6).
func TestAFIFOAmongAStepsFilesIsRefused(t *testing.T) {
	dir := harborDir(t, "version = \"1.0\"\n[environment]\ndocker_image = \"img\"\n")
	fifo := filepath.Join(dir, "solution", "solve.sh")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTaskDir(dir)
	if err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
		t.Errorf("a FIFO at solution/solve.sh: %v, want refused naming it", err)
	}
}
