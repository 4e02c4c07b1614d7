package agents

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/BurntSushi/toml"
)

// Definition is an installed agent, in the shape of Harbor's installed
// agents: a script that installs the agent's CLI in the trial's container,
// then a command that runs it on the task's instruction.
type Definition struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// Needs says what the agent needs that headroom cannot give it here
	// (network, an API key), shown by `headroom agents show`.
	Needs string `toml:"needs"`
	// Version is the default version pin; "" installs the latest.
	Version string            `toml:"version"`
	Install InstallSpec       `toml:"install"`
	Run     RunSpec           `toml:"run"`
	Env     map[string]string `toml:"env"`
	// PassEnv are host variables (API keys) the agent is given: "NAME" or
	// "NAME=HOST". Their values are secrets, redacted everywhere.
	PassEnv []string `toml:"pass_env"`
	// Files are written to FilesDir in the container before the install
	// (scripts the agent runs), by name.
	Files map[string]string `toml:"files"`

	// Source is the file the definition came from ("builtin:<file>").
	Source string `toml:"-"`
}

// InstallSpec is the install script template and its time limit.
type InstallSpec struct {
	Script     string  `toml:"script"`
	TimeoutSec float64 `toml:"timeout_sec"`
}

// RunSpec is the run command template and its time limit (0: the task's
// agent time limit).
type RunSpec struct {
	Command    string  `toml:"command"`
	TimeoutSec float64 `toml:"timeout_sec"`
}

// FilesDir is where a definition's files are written in the container.
const FilesDir = "/headroom/agent"

// DefaultInstallTimeout bounds an install whose definition sets none.
const DefaultInstallTimeout = 10 * time.Minute

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

//go:embed builtin/*.toml
var builtinFS embed.FS

// Library is the definitions a run can use, by name.
type Library struct {
	Defs []Definition
}

// Find returns the named definition.
func (l *Library) Find(name string) (Definition, bool) {
	for _, d := range l.Defs {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}

// Names lists the definitions' names in order.
func (l *Library) Names() []string {
	out := make([]string, len(l.Defs))
	for i, d := range l.Defs {
		out[i] = d.Name
	}
	return out
}

// Builtin is the definitions shipped in the binary.
func Builtin() (*Library, error) {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		return nil, err
	}
	l := &Library{}
	for _, e := range entries {
		data, err := builtinFS.ReadFile("builtin/" + e.Name())
		if err != nil {
			return nil, err
		}
		d, err := Parse("builtin:"+e.Name(), data)
		if err != nil {
			return nil, err
		}
		l.Defs = append(l.Defs, d)
	}
	return l, nil
}

// Load is the built-in definitions plus, if dir is set, every *.toml in
// dir; a definition in dir replaces a built-in one of the same name.
func Load(dir string) (*Library, error) {
	l, err := Builtin()
	if err != nil || dir == "" {
		return l, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--agents-dir %s: %w", dir, err)
		}
		return nil, fmt.Errorf("--agents-dir %s holds no *.toml agent definitions", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		d, err := Parse(f, data)
		if err != nil {
			return nil, err
		}
		replaced := false
		for i := range l.Defs {
			if l.Defs[i].Name == d.Name {
				l.Defs[i], replaced = d, true
			}
		}
		if !replaced {
			l.Defs = append(l.Defs, d)
		}
	}
	return l, nil
}

// Parse reads one definition; errors name the file, the line or field,
// and what to do.
func Parse(path string, data []byte) (Definition, error) {
	var d Definition
	md, err := toml.Decode(string(data), &d)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line := pe.Position.Line
			if pe.Position.Start > 0 && pe.Position.Start <= len(data) {
				line = bytes.Count(data[:pe.Position.Start], []byte{'\n'}) + 1
			}
			return d, fmt.Errorf("%s:%d: %s", path, line, pe.Message)
		}
		return d, fmt.Errorf("%s: %v", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return d, fmt.Errorf("%s: unknown key %s (an agent definition has name, description, needs, version, pass_env, [install] script/timeout_sec, [run] command/timeout_sec, [env], [files])", path, u[0])
	}
	d.Source = path
	switch {
	case !nameRE.MatchString(d.Name):
		return d, fmt.Errorf("%s: name %q: give a lower-case name of letters, digits, '.', '_' or '-'", path, d.Name)
	case strings.TrimSpace(d.Run.Command) == "":
		return d, fmt.Errorf("%s: agent %s has no [run] command", path, d.Name)
	case d.Install.TimeoutSec < 0 || d.Run.TimeoutSec < 0:
		return d, fmt.Errorf("%s: agent %s: timeout_sec must not be negative", path, d.Name)
	}
	for _, e := range d.PassEnv {
		n, h, _ := strings.Cut(e, "=")
		if !envName.MatchString(n) || (h != "" && !envName.MatchString(h)) {
			return d, fmt.Errorf("%s: pass_env %q is not NAME or NAME=HOST", path, e)
		}
	}
	for k := range d.Env {
		if !envName.MatchString(k) {
			return d, fmt.Errorf("%s: [env] %q is not an environment variable name", path, k)
		}
	}
	for k := range d.Files {
		if k == "" || strings.ContainsAny(k, "/\\") || k == "." || k == ".." {
			return d, fmt.Errorf("%s: [files] %q: give a plain file name", path, k)
		}
	}
	// Templates must parse now, not at the first trial.
	for what, text := range map[string]string{"[install] script": d.Install.Script, "[run] command": d.Run.Command} {
		if _, err := template.New(what).Option("missingkey=error").Parse(text); err != nil {
			return d, fmt.Errorf("%s: %s: %v", path, what, err)
		}
	}
	return d, nil
}
