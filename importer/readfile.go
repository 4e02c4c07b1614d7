package importer

import (
	"errors"
	"fmt"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
)

// MaxResultBytes bounds every file an import reads (a run's
// results.json, run_metadata.json, a job's or a trial's result.json): the
// largest public terminal-bench run (400 trials) writes 0.6 MiB, a Harbor
// trial's result.json a few KiB (more with rollout details).
const MaxResultBytes = 64 << 20

// MaxTrials bounds the trials one import takes, over all its directories:
// the largest public runs are hundreds; each trial held costs a few KiB
// until the experiment is written. A 23.5 MB results.json of 400,000
// minimal records took 268 s, 2.0 GB and 639 MB of store (the
// thirty-second attacker's 2).
const MaxTrials = 50_000

// maxTrials is MaxTrials, smaller in tests.
var maxTrials = MaxTrials

// tooManyTrials says an import past MaxTrials, naming where.
func tooManyTrials(where string, n int) string {
	return fmt.Sprintf("%s: %d trials, more than an import takes (%d): import the runs in parts", where, n, maxTrials)
}

// readResultFile reads one of a run's files with confine.ReadFile, as
// replay reads a recording's: a regular file only (a FIFO would wait for
// a writer forever, /dev/zero never end), looked at before it is opened
// and opened without blocking, of at most MaxResultBytes. A missing
// file's error is fs.ErrNotExist.
//
// root is the run's or job's directory given to import: a file there that
// is a link leading out of it is not read (a result.json linked to a file
// elsewhere was read and parsed, the twenty-fifth attacker's), as the task
// loader reads nothing outside a task's directory.
func readResultFile(root, path string) ([]byte, error) {
	data, err := confine.ReadFile(root, path, MaxResultBytes)
	var (
		nr *confine.NotRegularError
		tl *confine.TooLargeError
		oe *confine.OutsideError
	)
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("%s leads outside %s (a link): a harness writes its results inside its run's directory; give the run's own files", path, root)
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is not a regular file (%s): a harness writes its results as ordinary files; give the run's own directory", path, confine.Kind(nr.Mode))
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s is larger than %s, which no harness's result file needs: headroom reads at most that much", path, model.FormatBytes(MaxResultBytes))
	}
	return data, err
}
