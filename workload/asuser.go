package workload

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
)

// AsMode runs a command as a user, as the engine's `exec -u` does (the
// user found as the step driver finds it, lookupUser): a cluster has no
// exec user, so the console's shell in a pod that runs as root for its
// probe opens through it as the steps' user. --keep-home keeps the
// environment's HOME (the container's own sets one).
//
//	hr-workload as [--keep-home] USER -- ARGV...
const AsMode = "as"

// AsArgv is argv run as user through bin's as mode.
func AsArgv(bin, user string, keepHome bool, argv []string) []string {
	out := []string{bin, AsMode}
	if keepHome {
		out = append(out, "--keep-home")
	}
	return append(append(out, user, "--"), argv...)
}

// runAs becomes the user and replaces itself with the command; an unknown
// user exits 126, a command that cannot be found 127.
func runAs(args []string, stderr io.Writer) int {
	keepHome := len(args) > 0 && args[0] == "--keep-home"
	if keepHome {
		args = args[1:]
	}
	if len(args) < 3 || args[1] != "--" || args[0] == "" {
		fmt.Fprintln(stderr, "usage: hr-workload as [--keep-home] USER -- ARGV...")
		return 2
	}
	user, argv := args[0], args[2:]
	cred, home, err := lookupUser(user)
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload as: unable to find user %s: %v\n", user, err)
		return 126
	}
	env := os.Environ()
	if !keepHome {
		env = append(slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, "HOME=") }), "HOME="+home)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(stderr, "hr-workload as: %s: %v\n", argv[0], err)
		return 127
	}
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	// Every thread's (Go's syscall package applies them to all).
	if err := errors.Join(syscall.Setgroups(groups), syscall.Setgid(int(cred.Gid)), syscall.Setuid(int(cred.Uid))); err != nil {
		fmt.Fprintf(stderr, "hr-workload as: becoming %s: %v\n", user, err)
		return 126
	}
	err = syscall.Exec(path, argv, env)
	fmt.Fprintf(stderr, "hr-workload as: %s: %v\n", argv[0], err)
	return 126
}
