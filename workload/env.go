package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// EnvMode runs a command with more environment, as env(1) does, for an
// image with no env of its own (the built-in image is FROM scratch): a
// cluster's exec takes no environment, so a step's goes through it.
//
//	hr-workload env NAME=VALUE... -- ARGV...
const EnvMode = "env"

// EnvArgv is argv run with env added through bin's env mode.
func EnvArgv(bin string, env, argv []string) []string {
	out := append([]string{bin, EnvMode}, env...)
	return append(append(out, "--"), argv...)
}

// envArgs splits env mode's arguments into the variables and the command.
func envArgs(args []string) (env, argv []string, err error) {
	for i, a := range args {
		if a == "--" {
			if i+1 == len(args) {
				return nil, nil, errors.New("no command after --")
			}
			return env, args[i+1:], nil
		}
		if k, _, ok := strings.Cut(a, "="); !ok || k == "" {
			return nil, nil, fmt.Errorf("%q is not NAME=VALUE", a)
		}
		env = append(env, a)
	}
	return nil, nil, errors.New("no -- before the command")
}

// runEnv replaces itself with the command, the variables added (a later
// one wins, as env(1)); a command that cannot be found exits 127 and one
// that cannot be run 126, as a shell's.
func runEnv(args []string, stderr io.Writer) int {
	env, argv, err := envArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload env: %v (usage: env NAME=VALUE... -- ARGV...)\n", err)
		return 2
	}
	all := append(os.Environ(), env...)
	path := argv[0]
	if !strings.Contains(path, "/") {
		// The step's own PATH, when it sets one.
		for _, kv := range env {
			if p, ok := strings.CutPrefix(kv, "PATH="); ok {
				_ = os.Setenv("PATH", p)
			}
		}
		if path, err = exec.LookPath(argv[0]); err != nil {
			fmt.Fprintf(stderr, "hr-workload env: %s: %v\n", argv[0], err)
			return 127
		}
	}
	err = syscall.Exec(path, argv, all)
	fmt.Fprintf(stderr, "hr-workload env: %s: %v\n", argv[0], err)
	if errors.Is(err, syscall.ENOENT) {
		return 127
	}
	return 126
}
