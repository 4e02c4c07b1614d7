package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every file a replay reads of a recording that is no ordinary file is
// refused by name, without reading it: a link to /dev/zero (read whole,
// it grew the replay to 1.17 GB until the runtime died out of memory), a
// FIFO (opened, `headroom replay --list` waited for a writer forever) and
// a file past MaxRecordingBytes (sparse: os.Truncate).
func TestLoadRefusesSpecialRecordingFiles(t *testing.T) {
	kinds := []struct {
		name string
		make func(root, path string) error
		want string
	}{
		{"a link to /dev/zero", func(_, p string) error { return os.Symlink("/dev/zero", p) }, "leads outside"},
		// A link to a host file that parses as a recording: its lines
		// would be typed into the task's container (the thirty-second
		// attacker's 3).
		{"a link to a file outside the recording", func(root, p string) error {
			host := filepath.Join(root, "outside-"+filepath.Base(p))
			data, err := os.ReadFile(filepath.Join("testdata", "tb-run", "heavy-install", "heavy-install.2-of-2.run", filepath.Base(p)))
			if err != nil {
				data = []byte("{}")
			}
			if err := os.WriteFile(host, data, 0o644); err != nil {
				return err
			}
			return os.Symlink(host, p)
		}, "leads outside"},
		{"a FIFO", func(_, p string) error { return syscall.Mkfifo(p, 0o644) }, "is not a regular file (a FIFO): replay reads only regular files of at most 64MiB"},
		{"a FIFO", func(_, p string) error { return syscall.Mkfifo(p, 0o644) }, "is not a regular file (a FIFO): replay reads only regular files of at most 64MiB"},
		{"a file too large", func(_, p string) error {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				return err
			}
			return os.Truncate(p, MaxRecordingBytes+1)
		}, "is larger than 64MiB"},
	}
	harborTrial := "harbor-job/heavy-install__Ab3dE"
	tbTrial := "tb-run/heavy-install/heavy-install.2-of-2.run"
	files := []struct {
		trial, file string
		drop        string // removed first, so that file is the one read
	}{
		{harborTrial, "result.json", ""},
		{harborTrial, "agent/trajectory.json", ""},
		{tbTrial, "results.json", ""},
		{tbTrial, "../../run_metadata.json", ""},
		{tbTrial, "sessions/agent.cast", ""},
		{tbTrial, "commands.txt", "sessions/agent.cast"},
	}
	for _, k := range kinds {
		for _, f := range files {
			t.Run(k.name+" as "+filepath.Base(f.file), func(t *testing.T) {
				root := t.TempDir()
				if err := os.CopyFS(root, os.DirFS("testdata")); err != nil {
					t.Fatal(err)
				}
				trial := filepath.Join(root, f.trial)
				if f.drop != "" {
					if err := os.Remove(filepath.Join(trial, f.drop)); err != nil {
						t.Fatal(err)
					}
				}
				path := filepath.Join(trial, f.file)
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := k.make(root, path); err != nil {
					t.Fatal(err)
				}
				type loaded struct {
					f   Found
					err error
				}
				done := make(chan loaded, 1)
				go func() {
					found, err := Load(trial)
					done <- loaded{found, err}
				}()
				var l loaded
				select {
				case l = <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("Load still reads %s after 10 s", path)
				}
				if l.err != nil {
					t.Fatal(l.err)
				}
				if len(l.f.Recordings) != 0 || len(l.f.Refused) != 1 {
					t.Fatalf("recordings %+v refused %+v, want the trial refused", l.f.Recordings, l.f.Refused)
				}
				msg := l.f.Refused[0].Error()
				if !strings.Contains(msg, filepath.Clean(path)+" "+k.want) || strings.Contains(msg, "\n") {
					t.Errorf("refused as %q, want one line naming %s and %q", msg, path, k.want)
				}
			})
		}
	}
}

// A recorded trial or task name that is not one line of printable text
// refuses its trial, naming the file and the field: the replay runs the
// trial as a task of that name, and a trial_name holding "\nexperiment
// FAKE" printed, in --list and every progress line, a line headroom
// never wrote. The agent's and model's names, only shown, are escaped.
func TestLoadRefusesRecordedNamesThatAreNotOneLine(t *testing.T) {
	const forged = "x\u001b]0;PWNED\u0007\u001b[2J\nexperiment FAKE\r"
	for _, c := range []struct {
		trial, file, field, from, to string
	}{
		{"harbor-job/heavy-install__Ab3dE", "result.json", "trial_name", `"trial_name": "heavy-install__Ab3dE"`, `"trial_name": %q`},
		{"harbor-job/heavy-install__Ab3dE", "result.json", "task_name", `"task_name": "heavy-install"`, `"task_name": %q`},
		{"tb-run/heavy-install/heavy-install.2-of-2.run", "results.json", "trial_name", `"trial_name": "heavy-install.2-of-2.run"`, `"trial_name": %q`},
		{"tb-run/heavy-install/heavy-install.2-of-2.run", "results.json", "task_id", `"task_id": "heavy-install"`, `"task_id": %q`},
	} {
		t.Run(c.file+" "+c.field, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS("testdata")); err != nil {
				t.Fatal(err)
			}
			trial := filepath.Join(root, c.trial)
			path := filepath.Join(trial, c.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), c.from) {
				t.Fatalf("%s holds no %s", path, c.from)
			}
			forgedJSON, _ := json.Marshal(forged)
			data = []byte(strings.Replace(string(data), c.from, strings.Replace(c.to, "%q", string(forgedJSON), 1), 1))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Load(trial)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Recordings) != 0 || len(f.Refused) != 1 {
				t.Fatalf("recordings %+v refused %+v, want the trial refused", f.Recordings, f.Refused)
			}
			msg := f.Refused[0].Error()
			if strings.ContainsAny(msg, "\n\r\u001b\u0007") || !strings.Contains(msg, path+": "+c.file+"'s "+c.field+" ") || !strings.Contains(msg, "control character U+001B") {
				t.Errorf("refused as %q, want one line naming %s and its %s", msg, path, c.field)
			}
		})
	}

	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "harbor-job/heavy-install__Ab3dE/agent/trajectory.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var traj map[string]any
	if err := json.Unmarshal(data, &traj); err != nil {
		t.Fatal(err)
	}
	traj["agent"].(map[string]any)["name"] = forged
	if data, err = json.Marshal(traj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(filepath.Dir(filepath.Dir(path)))
	if err != nil || len(f.Recordings) != 1 {
		t.Fatalf("%v, %+v", err, f)
	}
	if a := f.Recordings[0].Agent; a != `x\u001b]0;PWNED\u0007\u001b[2J\nexperiment FAKE\r` {
		t.Errorf("agent name %q, want it escaped", a)
	}
}

// A commands.txt of more keys than any session types is refused by name
// as it is read, not parsed whole (a 64 MiB file of thousand-key lines
// grew `replay --list` to 1.6 GB for one trial); a cast of more typed
// inputs than MaxActions too.
func TestRecordingsOfTooManyKeysAreRefused(t *testing.T) {
	line := "[" + strings.Repeat("'', ", 999) + "'']\n"
	data := []byte(strings.Repeat(line, MaxKeys/1000+1))
	if _, err := commandsActions(data, "commands.txt"); err == nil || !strings.Contains(err.Error(), "commands.txt: more than 200000 keys typed") {
		t.Errorf("commands.txt of %d keys: %v", (MaxKeys/1000+1)*1000, err)
	}
	events := make([]castEvent, MaxActions+1)
	for i := range events {
		events[i] = castEvent{At: time.Duration(i) * time.Second, Kind: "i", Data: "true\r"}
	}
	if _, err := castActions(events, "agent.cast"); err == nil || !strings.Contains(err.Error(), "agent.cast: more than 50000 actions") {
		t.Errorf("cast of %d inputs: %v", len(events), err)
	}
	// A real session's size is far inside both.
	if _, err := commandsActions([]byte(strings.Repeat("['ls', 'Enter']\n", 2000)), "commands.txt"); err != nil {
		t.Error(err)
	}
}

// Two trials whose actions are one file (a hard link here) are one
// recording given twice: the second is refused, naming both, as import
// refuses a trial given twice. Each had been parsed and held.
func TestOneRecordingFileForTwoTrialsIsRefused(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(root, "tb-run")
	one := filepath.Join(run, "heavy-install", "heavy-install.1-of-2.run")
	two := filepath.Join(run, "heavy-install", "heavy-install.2-of-2.run")
	if err := os.Remove(filepath.Join(two, "sessions", "agent.cast")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(two, "commands.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(one, "sessions", "agent.cast"), filepath.Join(two, "sessions", "agent.cast")); err != nil {
		t.Fatal(err)
	}
	f, err := Load(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Recordings) != 1 || len(f.Refused) != 1 || !strings.Contains(f.Refused[0].Error(), "is the same file as") {
		t.Errorf("recordings %d, refused %+v; want one kept and the other refused as the same file", len(f.Recordings), f.Refused)
	}
}
