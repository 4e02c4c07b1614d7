package agents

import (
	"fmt"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// ExampleInstruction is the instruction `agents show` renders with: one
// with a quote in it, so the quoting shows.
const ExampleInstruction = "Fit the model in /app/data.csv; don't print the key."

// Describe says what a definition is and what it runs, rendered for an
// example task: the install and run steps as the container gets them.
func Describe(d Definition) (string, error) {
	a, err := Render(d, model.Task{Name: "example/task", Instruction: ExampleInstruction}, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name:        %s\nsource:      %s\ndescription: %s\n", d.Name, d.Source, d.Description)
	if d.Needs != "" {
		fmt.Fprintf(&b, "needs:       %s\n", d.Needs)
	}
	pin := d.Version
	if pin == "" {
		pin = "(unpinned: the latest)"
	}
	fmt.Fprintf(&b, "version:     %s (--agent-version %s=X pins another)\n", pin, d.Name)
	if len(d.PassEnv) > 0 {
		fmt.Fprintf(&b, "pass_env:    %s (values redacted from every output)\n", strings.Join(d.PassEnv, ", "))
	}
	timeout := "the task's agent time limit"
	if a.Timeout > 0 {
		timeout = a.Timeout.String()
	}
	fmt.Fprintf(&b, "timeouts:    install %s, run %s\n", a.InstallTimeout, timeout)
	for _, st := range a.Install {
		fmt.Fprintf(&b, "\ninstall step (traced: each command is a step of the install phase):\n%s\n", indent(st.Argv[1]))
	}
	for _, st := range a.Steps {
		fmt.Fprintf(&b, "\nrun step (traced), for an instruction %q:\n%s\n", ExampleInstruction, indent(st.Argv[1]))
		fmt.Fprintf(&b, "\nenvironment:\n")
		for _, e := range st.Env {
			if strings.HasPrefix(e, "HEADROOM_INSTRUCTION=") {
				continue
			}
			fmt.Fprintf(&b, "  %s\n", e)
		}
		for _, e := range st.PassEnv {
			name, host := model.PassEnvNames(e)
			fmt.Fprintf(&b, "  %s=[redacted %s]\n", name, host)
		}
	}
	for _, k := range sortedKeys(d.Files) {
		fmt.Fprintf(&b, "\nfile %s/%s:\n%s\n", FilesDir, k, indent(strings.TrimRight(d.Files[k], "\n")))
	}
	return b.String(), nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
