package docker

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// What goes into a container never follows a link to the host: a link
// named as an upload is refused, a link inside a copied directory (or a
// build context) goes in as the link itself, resolved in the container.
func TestUploadsDoNotFollowLinks(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "secret")
	os.WriteFile(secret, []byte("HOST SECRET"), 0o600)
	task := filepath.Join(root, "task")
	os.MkdirAll(filepath.Join(task, "tests"), 0o755)
	os.WriteFile(filepath.Join(task, "tests", "test.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink(secret, filepath.Join(task, "tests", "leak"))
	os.Symlink(secret, filepath.Join(task, "leak"))

	var buf bytes.Buffer
	err := runner.WriteUploads(&buf, []model.Upload{{From: filepath.Join(task, "leak"), To: "/mnt"}})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a linked upload: %v; want it refused", err)
	}
	for name, write := range map[string]func(w io.Writer) error{
		"uploads": func(w io.Writer) error {
			return runner.WriteUploads(w, []model.Upload{{From: filepath.Join(task, "tests"), To: "/tests"}})
		},
		"build context": func(w io.Writer) error { return tarDir(w, task, "") },
	} {
		buf.Reset()
		if err := write(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tr := tar.NewReader(&buf)
		sawLink := false
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(tr)
			if strings.Contains(string(body), "HOST SECRET") {
				t.Errorf("%s: %s carries the host file's content", name, h.Name)
			}
			if strings.HasSuffix(h.Name, "leak") {
				sawLink = h.Typeflag == tar.TypeSymlink && h.Linkname == secret
			}
		}
		if !sawLink {
			t.Errorf("%s: the link inside went in as something other than itself", name)
		}
	}
}
