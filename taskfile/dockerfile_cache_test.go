package taskfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Each RUN with a --mount=type=cache, and only those, at its line.
func TestCacheMounts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"FROM a\nRUN --mount=type=cache,target=/root/.cache/pip pip install x\n", []string{"Dockerfile:2"}},
		{"FROM a\nRUN echo\nRUN --mount=target=/c,type=cache,id=pip \\\n  true\nRUN --mount=type=bind,source=.,target=/s true\n", []string{"Dockerfile:3"}},
		{"FROM a\nRUN --mount=type=secret,id=x --mount=type=cache,target=/c true\n", []string{"Dockerfile:2"}},
		{"FROM a\nRUN --mount=type=bind,target=/cache true\nRUN echo type=cache\n", nil},
		{"FROM a\nRUN --mount=type=tmpfs,target=/t true\n", nil},
	} {
		if got := cacheMounts("Dockerfile", parseDockerfile(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("cacheMounts(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// A Harbor task whose Dockerfile mounts a cache is loaded with the
// deviation at its line, which tasks audit and tasks show print.
func TestCacheMountDeviation(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"task.toml":              "schema_version = \"1.1\"\n[task]\nname = \"suite/cachey\"\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 60.0\n",
		"instruction.md":         "Do it.\n",
		"environment/Dockerfile": "FROM debian\nWORKDIR /app\nRUN --mount=type=cache,target=/root/.cache/pip pip install requests\n",
		"tests/test.sh":          "#!/bin/sh\n",
		"solution/solve.sh":      "#!/bin/sh\n",
	}
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range l.Task.AllDeviations() {
		if strings.Contains(d.String(), "--mount=type=cache") {
			found = append(found, d.String())
		}
	}
	const want = "image Dockerfile:3: RUN --mount=type=cache shares a cache with every build on this engine (and with other tenants'); its content survives the trial"
	if len(found) != 1 || !strings.Contains(found[0], want) {
		t.Errorf("the task's cache-mount deviations = %q; want one, saying %q", found, want)
	}
	if l.Task.Build == nil || l.Task.Build.NeedsBuildKit != "Dockerfile:3: RUN --mount" {
		t.Errorf("Build = %+v; want NeedsBuildKit still naming Dockerfile:3's --mount", l.Task.Build)
	}
}
