package taskfile

import (
	"embed"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// tbDescription is one of an older task.yaml's descriptions: the harness
// asks the agent the one whose key the run names, "base" unless told.
type tbDescription struct {
	Key         string `yaml:"key"`
	Description string `yaml:"description"`
}

// tbBaseKey is the description terminal-bench's harness asks by default.
const tbBaseKey = "base"

// instruction is what the agent is asked, resolved as the harness does:
// `instruction` itself, unless it names one of the descriptions' keys
// (datasets written for both versions of the harness say `instruction:
// base`); without it, the description keyed base, else the first.
func (y tbOldTask) instruction() string {
	find := func(key string) (string, bool) {
		for _, d := range y.Descriptions {
			if d.Key == key {
				return d.Description, true
			}
		}
		return "", false
	}
	if text := strings.TrimSpace(y.Instruction); text != "" {
		if d, ok := find(text); ok {
			return d
		}
		return y.Instruction
	}
	if d, ok := find(tbBaseKey); ok {
		return d
	}
	if len(y.Descriptions) > 0 {
		return y.Descriptions[0].Description
	}
	return ""
}

// The helper scripts terminal-bench's harness supplied beside run-tests.sh
// (a task names them in test_scripts): headroom's own, doing what the
// harness's do.
//
//go:embed tbscripts/*.sh
var tbScripts embed.FS

// harnessScripts are the uploads that put the helper scripts a task needs
// into its tests directory: those test_scripts names, or without it those
// run-tests.sh names. A script of the same name in the task's own tests/
// is the task's and wins; a name headroom has no script for is an error.
func harnessScripts(dir, runTests string, listed []string) ([]model.Upload, error) {
	names := listed
	if names == nil {
		body, err := readTaskFile(dir, runTests)
		if err != nil {
			return nil, err
		}
		entries, _ := tbScripts.ReadDir("tbscripts")
		for _, e := range entries {
			if strings.Contains(string(body), e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	var out []model.Upload
	for _, n := range names {
		if exists(filepath.Join(dir, "tests", n)) {
			continue
		}
		body, err := tbScripts.ReadFile("tbscripts/" + filepath.Base(n))
		if err != nil {
			return nil, fmt.Errorf("test_scripts: %q is not a script terminal-bench's harness supplies that headroom has (it has %s); put it in the task's tests/ directory", n, scriptNames())
		}
		out = append(out, model.Upload{To: TestsDir, Name: filepath.Base(n), Content: string(body), Executable: true})
	}
	return out, nil
}

func scriptNames() string {
	entries, _ := tbScripts.ReadDir("tbscripts")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}

// LoadFile loads one task file. A task directory's own task.toml or
// task.yaml loads its directory: read alone as headroom's format, the
// file would be judged by the wrong rules.
func LoadFile(path string) (Loaded, error) {
	if base := filepath.Base(path); base == "task.toml" || base == "task.yaml" {
		if dir := filepath.Dir(path); TaskDirKind(dir) != "" {
			return LoadTaskDir(dir)
		}
	}
	if ext := filepath.Ext(path); ext != ".toml" && ext != ".yaml" && ext != ".yml" {
		// Read as TOML, a task directory's instruction.md was "expected
		// '.' or '=', but got '/'" (a new user's).
		where := "a headroom task file (.toml)"
		if dir := filepath.Dir(path); TaskDirKind(dir) != "" {
			where = "its directory, " + dir
		}
		return Loaded{}, fmt.Errorf("%s: not a task file: give %s", path, where)
	}
	data, err := readTaskFile("", path)
	if err != nil {
		return Loaded{}, err
	}
	return Parse(path, data)
}
