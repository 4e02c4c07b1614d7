// Package buildignore reads a build context's .dockerignore as the docker
// CLI and BuildKit read it: the one reader behind what the Docker backend
// sends a build and what the task loader says a COPY finds there.
package buildignore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
)

// MaxBytes bounds a .dockerignore, as the task loader bounds a task's
// files.
const MaxBytes = 1 << 20

// Read reads the .dockerignore of the build context dir (nil when it has
// none, or names nothing).
func Read(dir string) (*patternmatcher.PatternMatcher, error) {
	name := filepath.Join(dir, ".dockerignore")
	// Read as every other task file is (confine.ReadFile): inside the
	// context (a link to /proc/self/fd/0 read headroom's own stdin), a
	// regular file looked at before it is opened (opening a FIFO waits for
	// a writer: a whole run hung, deaf to signals), opened without
	// blocking, bounded.
	data, err := confine.ReadFile(dir, name, MaxBytes)
	var (
		nr *confine.NotRegularError
		tl *confine.TooLargeError
	)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is not a regular file (%s): a build's .dockerignore is an ordinary file", name, nr.Mode.Type())
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s: larger than %s, which no .dockerignore needs: headroom reads at most that much", name, model.FormatBytes(MaxBytes))
	case errors.Is(err, confine.ErrOutside):
		return nil, fmt.Errorf("%w: headroom reads nothing for a build from outside its context", err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	patterns, err := ignorefile.ReadAll(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	return patternmatcher.New(patterns)
}
