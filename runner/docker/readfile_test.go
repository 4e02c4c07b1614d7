package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner"
)

// The engine's copy (--exec-steps) reads a reward file as the step driver
// does (workload.OpenInDir), and as Harbor reads its bind mount's file: a
// relative link, hop by hop, to a regular file in the same directory is
// followed; one absolute, out of the directory (even to come back),
// looping or to a directory is refused; 2 MB (a 1 and newlines) is read
// whole, more than model.MaxRewardFileBytes refused.
func TestReadFileFollowsLinksOnlyInItsDirectory(t *testing.T) {
	sb := startPrepared(t, "readfile-links", strings.Join([]string{
		"mkdir -p /logs/verifier/sub && cd /logs/verifier",
		"echo 1 > real.txt && echo 0.5 > sub/deep.txt && echo 1 > /logs/outside.txt",
		"{ echo 1; head -c 2000000 /dev/zero | tr '\\0' '\\n'; } > big.txt",
		"head -c 67108865 /dev/zero > huge.txt",
		"ln -s real.txt beside.txt && ln -s beside.txt chain.txt && ln -s sub/../real.txt dotted.txt",
		"ln -s sub sublink && ln -s sublink/deep.txt viasub.txt",
		"ln -s /logs/verifier/real.txt absolute.txt && ln -s ../outside.txt escape.txt",
		"ln -s ../../proc/1/environ proc.txt && ln -s ../verifier/real.txt updown.txt",
		"ln -s loop.txt loop.txt && ln -s nothing.txt dangling.txt && ln -s sub todir.txt",
	}, " && "))
	ctx := context.Background()
	for name, want := range map[string]struct {
		err  error
		data string
	}{
		"real.txt":     {nil, "1\n"},
		"beside.txt":   {nil, "1\n"},
		"chain.txt":    {nil, "1\n"},
		"dotted.txt":   {nil, "1\n"},
		"viasub.txt":   {nil, "0.5\n"},
		"big.txt":      {nil, "1 "}, // as model.RewardBuffer keeps it
		"absolute.txt": {runner.ErrNotReadable, ""},
		"escape.txt":   {runner.ErrNotReadable, ""},
		"proc.txt":     {runner.ErrNotReadable, ""},
		"updown.txt":   {runner.ErrNotReadable, ""},
		"loop.txt":     {runner.ErrNotReadable, ""},
		"dangling.txt": {fs.ErrNotExist, ""},
		"todir.txt":    {runner.ErrNotReadable, ""},
		"huge.txt":     {runner.ErrNotReadable, ""},
	} {
		data, err := sb.ReadFile(ctx, "/logs/verifier/"+name)
		if (want.err == nil) != (err == nil) || (want.err != nil && !errors.Is(err, want.err)) {
			t.Errorf("ReadFile %s: %v, want %v", name, err, want.err)
			continue
		}
		if name == "escape.txt" && !strings.Contains(fmt.Sprint(err), "escape.txt → ../outside.txt") {
			t.Errorf("ReadFile %s: %v, want the link and its target named", name, err)
		}
		if string(data) != want.data {
			t.Errorf("ReadFile %s: %d bytes, want %d", name, len(data), len(want.data))
		}
	}
}
