package cli

import (
	"os"
	"syscall"
)

// DumpOnQuitEnv, set to 1, leaves SIGQUIT to Go's default (a goroutine
// dump and exit 2) for a developer who wants to see where headroom hangs;
// the run's records and containers are then left as a crash leaves them.
const DumpOnQuitEnv = "HEADROOM_SIGQUIT_DUMP"

// stopSignals end a sweep the same way: its running trials stopped,
// removed and recorded as cancelled, exit ExitInterrupted. SIGHUP is the
// terminal closed under a run: left to its default it killed headroom at
// once (exit 129), leaving containers for the next run's reaper and no
// record of the trials it stopped. Every other signal that someone can
// send to stop a process acts the same: SIGQUIT (Ctrl-\) and SIGABRT,
// SIGTRAP, SIGSYS, SIGSTKFLT and the faults sent by kill (Go's default:
// a goroutine dump and exit 2, measured: 0 records, the manifest left
// running, containers leaked), and those whose default action is to end
// a process that Go ignores unless asked (SIGUSR1, SIGUSR2, SIGALRM,
// SIGVTALRM, SIGXCPU, SIGXFSZ, SIGPWR): their sender meant it to stop.
// Not SIGPROF (the CPU profiler's), not SIGPIPE (root.go: a closed pipe
// is a write error, not a stop), not SIGURG/SIGCHLD/SIGWINCH (ignored by
// default). A fault the program itself causes stays a crash: Go delivers
// only sent ones to a channel.
var stopSignals = stopSet(os.Getenv(DumpOnQuitEnv) == "1")

func stopSet(dump bool) []os.Signal {
	s := []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
	if !dump {
		s = append(s, syscall.SIGQUIT)
	}
	return append(append(s, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS, syscall.SIGILL, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ), platformStopSignals...)
}

// consoleStopSignals are stopSignals but SIGINT, which the console reads
// as a key (Ctrl-C) in raw mode.
func consoleStopSignals() []os.Signal {
	var s []os.Signal
	for _, sig := range stopSignals {
		if sig != os.Interrupt {
			s = append(s, sig)
		}
	}
	return s
}
