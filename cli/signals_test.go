package cli

import (
	"os"
	"slices"
	"syscall"
	"testing"
)

// Seen (hostile F9): SIGQUIT to `run` dumped goroutines and exited,
// leaving the manifest running and containers behind; SIGUSR1 was
// ignored. Every signal sent to end a process stops the sweep as SIGTERM.
func TestStopSignalsAreEverySignalSentToEnd(t *testing.T) {
	s := stopSet(false)
	for _, want := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ} {
		if !slices.Contains(s, want) {
			t.Errorf("%v does not stop a sweep", want)
		}
	}
	for _, not := range []os.Signal{syscall.SIGPROF, syscall.SIGPIPE, syscall.SIGCHLD, syscall.SIGWINCH, syscall.SIGURG, syscall.SIGTSTP, syscall.SIGCONT} {
		if slices.Contains(s, not) {
			t.Errorf("%v stops a sweep", not)
		}
	}
	if slices.Contains(stopSet(true), os.Signal(syscall.SIGQUIT)) {
		t.Errorf("%s=1 should leave SIGQUIT its goroutine dump", DumpOnQuitEnv)
	}
	if slices.Contains(consoleStopSignals(), os.Signal(os.Interrupt)) {
		t.Error("the console reads Ctrl-C as a key")
	}
}
