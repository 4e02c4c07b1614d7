package replay

import (
	"errors"
	"fmt"

	"github.com/headroom-eval/headroom/confine"
	"github.com/headroom-eval/headroom/model"
)

// MaxRecordingBytes bounds every file a replay reads of a recording
// (result.json, agent/trajectory.json, results.json, run_metadata.json,
// sessions/agent.cast, commands.txt): a long terminus trajectory or cast
// is a few MiB, as the importer's bound on a harness's files.
const MaxRecordingBytes = 64 << 20

// readRecorded reads one file of a recording with confine.ReadFile: a
// regular file only, looked at before it is opened and opened without
// blocking, and at most MaxRecordingBytes. A link to /dev/zero in its
// place grew the replay to 1.17 GB until the runtime died out of memory,
// and a FIFO hung `headroom replay --list`; now each is refused in one
// line that names the file. A missing file's error is fs.ErrNotExist, as
// os.ReadFile's, so an optional file missing is told apart.
//
// root is the recording's job or run directory: a file there that is a
// link leading out of it is not read, as import reads none (a
// commands.txt linked to a host file had its lines typed into the task's
// container, the thirty-second attacker's 3).
func readRecorded(root, path string) ([]byte, error) {
	data, err := confine.ReadFile(root, path, MaxRecordingBytes)
	var (
		nr *confine.NotRegularError
		tl *confine.TooLargeError
		oe *confine.OutsideError
	)
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("%s leads outside %s (a link): a harness writes its recordings inside its job's or run's directory; give the recording's own files", path, root)
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s is not a regular file (%s): replay reads only regular files of at most %s; put the harness's own file back", path, confine.Kind(nr.Mode), model.FormatBytes(MaxRecordingBytes))
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s is larger than %s: replay reads only regular files of at most %s, which no harness's recording needs", path, model.FormatBytes(MaxRecordingBytes), model.FormatBytes(MaxRecordingBytes))
	}
	return data, err
}

// MaxActions bounds the actions one recording replays, and MaxKeys the
// keys typed in all (a terminal's commands hold a few each): a real
// agent's session is a few hundred actions. A 64 MiB commands.txt of
// thousand-key lines had grown `replay --list` to 1.6 GB for one trial,
// 5.9 GB for four (the thirty-second attacker's 2).
const (
	MaxActions = 50_000
	MaxKeys    = 200_000
)

// tooMany says a recording holds more actions or keys than a replay
// takes, naming the file.
func tooMany(where string, actions, keys int) error {
	if actions > MaxActions {
		return fmt.Errorf("%s: more than %d actions, which no agent's session needs: replay takes at most that many", where, MaxActions)
	}
	if keys > MaxKeys {
		return fmt.Errorf("%s: more than %d keys typed, which no agent's session needs: replay takes at most that many", where, MaxKeys)
	}
	return nil
}
