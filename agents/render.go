package agents

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// TemplateData is what an install script or run command template sees.
type TemplateData struct {
	// Instruction is the task's instruction quoted for a POSIX shell (one
	// word), as Harbor's templates insert it.
	Instruction string
	// InstructionFile holds the instruction unquoted, for CLIs that read
	// a file.
	InstructionFile string
	Version         string // the pin, "" for the latest
	Task            string // the task's name
	FilesDir        string // where the definition's files are
}

// ShellQuote quotes s as one word for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func render(what, text string, data TemplateData) (string, error) {
	tpl, err := template.New(what).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return strings.TrimSpace(b.String()), nil
}

// Render makes the definition into one of the task's agents: an install
// step (the script, traced, so each command it runs is a step of its own
// in the install phase) and the agent step (the run command, traced),
// with the instruction, the definition's environment and its pass-through
// secrets. version overrides the definition's pin when set.
func Render(d Definition, t model.Task, version string) (model.Agent, error) {
	if version == "" {
		version = d.Version
	}
	data := TemplateData{Instruction: ShellQuote(t.Instruction), InstructionFile: taskfile.InstructionFile, Version: version, Task: t.Name, FilesDir: FilesDir}
	install, err := render("[install] script", d.Install.Script, data)
	if err != nil {
		return model.Agent{}, fmt.Errorf("agent %s (%s): %w", d.Name, d.Source, err)
	}
	env := func(instruction string) []string {
		out := []string{
			"HEADROOM_INSTRUCTION=" + instruction,
			"HEADROOM_INSTRUCTION_FILE=" + taskfile.InstructionFile,
			"HEADROOM_TASK=" + t.Name,
			"HEADROOM_AGENT_VERSION=" + version,
		}
		for _, k := range sortedKeys(d.Env) {
			out = append(out, k+"="+d.Env[k])
		}
		return out
	}
	files := func(instruction string) []model.Upload {
		out := []model.Upload{{To: "/headroom", Name: "instruction.md", Content: instruction}, {To: taskfile.AgentLogDir}}
		for _, k := range sortedKeys(d.Files) {
			out = append(out, model.Upload{To: FilesDir, Name: k, Content: d.Files[k], Executable: true})
		}
		return out
	}
	a := model.Agent{
		Name: d.Name, Description: d.Description, Version: version,
		Timeout: seconds(d.Run.TimeoutSec, 0),
	}
	// Each run step (one per phase of a multi-step task) writes its own
	// instruction file, so every one carries the files.
	var renderErr error
	a.Steps = perPhase(t, func(instruction string) model.Step {
		data.Instruction = ShellQuote(instruction)
		run, err := render("[run] command", d.Run.Command, data)
		if err != nil && renderErr == nil {
			renderErr = err
		}
		return model.Step{Name: "agent", Show: run, Argv: []string{"-c", run}, Trace: true, Env: env(instruction), PassEnv: slices.Clone(d.PassEnv), Files: files(instruction)}
	})
	if renderErr != nil {
		return model.Agent{}, fmt.Errorf("agent %s (%s): %w", d.Name, d.Source, renderErr)
	}
	if install != "" {
		a.Install = []model.Step{{Name: "install", Show: firstLine(install), Argv: []string{"-c", install}, Trace: true, Env: env(t.Instruction), Files: files(t.Instruction)}}
		a.InstallTimeout = seconds(d.Install.TimeoutSec, DefaultInstallTimeout)
	}
	return a, nil
}

func seconds(s float64, def time.Duration) time.Duration {
	if s <= 0 {
		return def
	}
	return time.Duration(s * float64(time.Second))
}

func firstLine(s string) string {
	first, _, more := strings.Cut(s, "\n")
	if more {
		return first + " …"
	}
	return first
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
