package workload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The probe as a cluster pod's root step driver (the Kubernetes backend
// runs the pod as root where the task's image has a USER of its own):
// asked whether a user is one a step can run as, it answers as the Docker
// step driver does (an unknown one 126, in the engine's words), and a
// step it runs as a user gets that user's HOME from /etc/passwd unless
// the container's environment sets one (KeepHome), as runc does. Before:
// the question ran as a step ("ghost": not found, 127) and a step run as
// nobody kept root's HOME.
func TestProbeAnswersAndRunsAsTheStepsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs a step as another user: needs root")
	}
	dir := t.TempDir()
	etcPasswd, etcGroup = filepath.Join(dir, "passwd"), filepath.Join(dir, "group")
	t.Cleanup(func() { etcPasswd, etcGroup = "/etc/passwd", "/etc/group" })
	os.WriteFile(etcPasswd, []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"), 0o644)
	os.WriteFile(etcGroup, []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644)
	t.Setenv("HOME", "/root")
	out := &syncBuffer{}
	stop := make(chan struct{})
	defer close(stop)
	p := startProbe(dir, time.Hour, out, stop) // no cgroup there: it serves all the same
	var in bytes.Buffer
	show := []string{"/bin/sh", "-c", "echo $(id -u) $HOME"}
	for _, c := range []Command{
		{Op: OpUser, Argv: []string{"ghost"}, End: "u1"},
		{Op: OpUser, Argv: []string{"nobody"}, End: "u2"},
		{Argv: show, User: "nobody", End: "s1"},
		{Argv: show, User: "nobody", KeepHome: true, End: "s2"},
		{Argv: show, User: "nobody", Env: []string{"HOME=/mine"}, End: "s3"},
	} {
		b, _ := json.Marshal(c)
		in.Write(append(b, '\n'))
	}
	var stderr bytes.Buffer
	p.serve(&in, &stderr)
	said, codes := map[string][]string{}, map[string]int{}
	for _, l := range out.lines() {
		switch l.Kind {
		case ProbeOut, ProbeErr:
			said[l.ID] = append(said[l.ID], l.Text)
		case ProbeExit:
			codes[l.ID] = l.Code
		}
	}
	for _, c := range []struct {
		id   string
		code int
		said string
	}{
		{"u1", 126, "unable to find user ghost: not in /etc/passwd"},
		{"u2", 0, ""},
		{"s1", 0, "65534 /nonexistent"},
		{"s2", 0, "65534 /root"},
		{"s3", 0, "65534 /mine"},
	} {
		if got, ok := codes[c.id]; !ok || got != c.code || strings.Join(said[c.id], "|") != c.said {
			t.Errorf("%s: exit %d (answered %v) said %q, want %d %q", c.id, got, ok, said[c.id], c.code, c.said)
		}
	}
}
