package session

import (
	"os"
	"strings"

	"github.com/headroom-eval/headroom/runner/docker"
)

// driverBinary is this headroom's own binary when task images can run
// their steps through it: the engine is local (the binary is mounted from
// this host) and the binary is static. A test binary is not headroom's
// main, which is what dispatches to the driver by name.
func (e *Engine) driverBinary() string {
	if !strings.HasPrefix(e.Cli.DaemonHost(), "unix://") {
		return ""
	}
	self, err := os.Executable()
	if err != nil || strings.HasSuffix(self, ".test") || docker.CheckDriverBinary(self) != nil {
		return ""
	}
	return self
}
