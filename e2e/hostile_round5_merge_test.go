//go:build hostile

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Round five, finding 3: a compose file whose YAML merge keys nest.

// composeMergeBomb is the attacker's 682-byte docker-compose.yaml: x-aN
// merges ten of x-a(N-1), nine levels, and service main merges x-a9.
func composeMergeBomb() string {
	var b strings.Builder
	b.WriteString("x-a0: &a0\n  K: v\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "x-a%d: &a%d\n  <<: [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	b.WriteString("services:\n  main:\n    <<: *a9\n    environment:\n      FOO: bar\n")
	return b.String()
}

// TestHostileR5ComposeMergeBomb: `headroom tasks validate` on a Harbor
// task whose compose file nests merge keys nine deep. Every alias's
// merges were followed again (10^9 merges: depth 7 took 5 s, depth 9
// minutes), while the loader held SIGTERM. Each merged mapping is now
// merged once and a file whose merges cost more than the merge budget is
// refused at its merge key (TestComposeMerge* in taskfile): the answer,
// loaded or refused, comes at once. The binary gets mergeDeadline, then
// SIGTERM and mergeTermGrace to go.
func TestHostileR5ComposeMergeBomb(t *testing.T) {
	const mergeDeadline, mergeTermGrace = 20 * time.Second, 5 * time.Second
	bin := hostileBin(t)
	root := t.TempDir()
	bomb := composeMergeBomb()
	if len(bomb) != 682 {
		t.Fatalf("the merge bomb is %d bytes; the attacker's was 682", len(bomb))
	}
	dir := harborTask(t, filepath.Join(root, "tasks"), "mergebomb", "hostile-r5/mergebomb", map[string]string{
		"environment/docker-compose.yaml": bomb,
	})

	ctx, cancel := context.WithTimeout(context.Background(), mergeDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "tasks", "validate", dir)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = mergeTermGrace // then SIGKILL
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(10 * time.Millisecond)
	text := strings.TrimSpace(out.String())

	lost, forged := 0, 0
	var said string
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		// No answer in the deadline: the load is lost; a binary still
		// running mergeTermGrace after SIGTERM is killed.
		lost = 1
		after := "exited on SIGTERM"
		if took >= mergeDeadline+mergeTermGrace {
			after = fmt.Sprintf("still running %s after SIGTERM, killed", mergeTermGrace)
		}
		said = fmt.Sprintf("no answer in %s; %s (%q)", mergeDeadline, after, text)
	case err == nil && strings.Contains(text, "ok ") && strings.Contains(text, "mergebomb"):
		said = fmt.Sprintf("exit 0 in %s: %q", took, text)
	case errors.As(err, &ee) && strings.Contains(text, "docker-compose.yaml:") && strings.Contains(text, `merge key "<<"`):
		said = fmt.Sprintf("exit %d in %s, refused at its merge key: %q", ee.ExitCode(), took, text)
	default:
		// An answer that is neither the task loaded nor refused at its
		// merge key says something the file did not.
		forged = 1
		said = fmt.Sprintf("%v in %s: %q", err, took, text)
	}
	letoutRow(t, "a Harbor task whose 682-byte docker-compose.yaml nests merge keys nine deep (x-aN: `<<: [*a(N-1) ×10]`, service main `<<: *a9`); `headroom tasks validate DIR`", said, lost, 0, forged)
}
