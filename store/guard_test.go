package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// recordOne records a whole trial: started, ended.
func recordOne(e *Experiment, id string) error {
	base := event.Base{Trial: id, Time: time.Now()}
	if err := e.Record(event.TrialStarted{Base: base}); err != nil {
		return err
	}
	return e.Record(event.TrialEnded{Base: base, Result: result(id, model.Passed)})
}

// A removed experiment directory is never made again: the next record
// fails naming where the records went (saved beside it, from the file
// still open), and no finished manifest appears at its path.
func TestRemovedDirectoryIsNotRecreated(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := recordOne(e, "t0001"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(e.Dir); err != nil {
		t.Fatal(err)
	}
	err = recordOne(e, "t0002")
	var gone *DirGoneError
	if !errors.As(err, &gone) || gone.MovedTo != "" || gone.Records != 1 || gone.Rescued != filepath.Join(root, "exp1.rescued") {
		t.Fatalf("after rm -rf: %v (%+v)", err, gone)
	}
	if err := e.Record(event.SweepEnded{}); err == nil {
		t.Error("the sweep's end was recorded into a removed directory")
	}
	e.Close()
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the removed directory was made again: %v", err)
	}
	rs, _, err := ReadTrials(gone.Rescued)
	if m, merr := ReadManifest(gone.Rescued); err != nil || merr != nil || len(rs) != 1 || rs[0].ID != "t0001" || m.Status != "interrupted" {
		t.Errorf("rescued: %+v %v, manifest %+v %v", rs, err, m, merr)
	}
}

// A moved experiment directory is found where it went; nothing more is
// written at either place.
func TestMovedDirectoryIsNamed(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	if err := recordOne(e, "t0001"); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(root, "elsewhere")
	if err := os.Rename(e.Dir, to); err != nil {
		t.Fatal(err)
	}
	err = recordOne(e, "t0002")
	var gone *DirGoneError
	if !errors.As(err, &gone) || gone.MovedTo != to || gone.Records != 1 || !strings.Contains(err.Error(), "moved to "+to) {
		t.Fatalf("after mv: %v (%+v)", err, gone)
	}
	e.Close()
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the moved directory was made again at its old path: %v", err)
	}
	if rs, _, _ := ReadTrials(to); len(rs) != 1 {
		t.Errorf("moved records: %+v", rs)
	}
}

// An experiment has one writer: a second open is refused naming the
// holder; once the holder dies, the lock goes with it.
func TestSecondWriterRefused(t *testing.T) {
	root := t.TempDir()
	e, err := Create(root, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	var held *LockedError
	if !errors.As(err, &held) || !strings.Contains(held.Holder, "pid "+itoa(os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	e.Close()
	e2, err := Open(e.Dir, Manifest{ID: "exp1", Status: "running"})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	e2.Close()

	// A holder killed with SIGKILL leaves no lock behind.
	cmd := exec.Command("flock", filepath.Join(e.Dir, LockFile), "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock(1)")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		lk, err := LockExperiment(e.Dir)
		if err != nil {
			break // the child holds it
		}
		lk.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("flock(1) never took the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	// The group's last process (sleep) closes the lock as it exits.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lk, err := LockExperiment(e.Dir)
		if err == nil {
			lk.Unlock()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after its holder was killed: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
