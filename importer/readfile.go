package importer

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/headroom-eval/headroom/model"
)

// MaxResultBytes bounds every file an import reads (a run's
// results.json, run_metadata.json, a job's or a trial's result.json): the
// largest public terminal-bench run (400 trials) writes 0.6 MiB, a Harbor
// trial's result.json a few KiB (more with rollout details).
const MaxResultBytes = 64 << 20

// readResultFile reads one of a run's files: it must be a regular file
// (a FIFO would wait for a writer forever, /dev/zero never end) and hold
// at most MaxResultBytes. A missing file's error is fs.ErrNotExist.
func readResultFile(path string) ([]byte, error) {
	// Looked at before it is opened: opening a FIFO waits for a writer.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regularAndBounded(path, st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Looked at again once open: the path may have been swapped between.
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularAndBounded(path, st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxResultBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResultBytes {
		return nil, tooLarge(path)
	}
	return data, nil
}

func regularAndBounded(path string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s): a harness writes its results as ordinary files; give the run's own directory", path, st.Mode().Type())
	}
	if st.Size() > MaxResultBytes {
		return tooLarge(path)
	}
	return nil
}

func tooLarge(path string) error {
	return fmt.Errorf("%s is larger than %s, which no harness's result file needs: headroom reads at most that much", path, model.FormatBytes(MaxResultBytes))
}
