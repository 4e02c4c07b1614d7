package cli

import (
	"os"
	"syscall"
)

// platformStopSignals are Linux's own signals whose default ends a process.
var platformStopSignals = []os.Signal{syscall.SIGPWR, syscall.SIGSTKFLT}
