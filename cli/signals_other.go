//go:build !linux

package cli

import "os"

var platformStopSignals []os.Signal
