package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// artifactsPrefix starts the name of the temporary directory a separate
// verifier's artifacts pass through (up to 1 GiB a path).
const artifactsPrefix = "headroom-artifacts-"

// artifactsDir makes that directory, named after this process (its pid
// and start time, as an owner label has them): a crash leaves it behind,
// and ReapArtifacts can prove its owner gone.
func artifactsDir() (string, error) {
	parts := strings.Split(Owner(), ":")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "-", "") // the boot id's
	}
	return os.MkdirTemp("", artifactsPrefix+strings.Join(parts[1:], "-")+"-")
}

// ReapArtifacts removes the artifact directories in the temporary
// directory whose headroom is proven gone (OwnerCheck of the pid and
// start time in the name, on this host); one whose name carries no
// complete owner, or that is not this user's own directory, is left. It
// returns a line for each removal, with the evidence.
func ReapArtifacts() []string {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), artifactsPrefix+"*"))
	host, _ := os.Hostname()
	var out []string
	for _, m := range matches {
		// pid-start-boot-pidns-random (Owner's fields, the boot id
		// without its hyphens).
		fields := strings.SplitN(strings.TrimPrefix(filepath.Base(m), artifactsPrefix), "-", 5)
		if len(fields) != 5 {
			continue
		}
		st, err := os.Lstat(m)
		sys, ok := st.Sys().(*syscall.Stat_t)
		if err != nil || !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() {
			continue
		}
		owner := host + ":" + strings.Join(fields[:4], ":")
		check := OwnerCheck(owner)
		if check.Alive {
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			out = append(out, fmt.Sprintf("could not remove leftover artifacts %s of headroom %s: %v", m, owner, err))
			continue
		}
		out = append(out, fmt.Sprintf("removed leftover artifacts %s of headroom %s, gone: %s", m, owner, check.Evidence))
	}
	return out
}
