package importer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A result file that is no ordinary file is refused by name, without
// reading it: /dev/zero (read whole, it ate memory until the kernel
// killed the import), a FIFO (opened, it waited for a writer forever)
// and a file past MaxResultBytes.
func TestImportRefusesSpecialResultFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "leads outside"},
		// A link out of the run to an ordinary file was read and parsed
		// (the twenty-fifth attacker's): nothing outside the run is read.
		{"a link to a file outside the run", func(p string) error {
			out := filepath.Join(t.TempDir(), "elsewhere.json")
			if err := os.WriteFile(out, []byte(`{}`), 0o644); err != nil {
				return err
			}
			return os.Symlink(out, p)
		}, "leads outside"},
		{"a link within the run to a FIFO", func(p string) error {
			fifo := filepath.Join(filepath.Dir(p), "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				return err
			}
			return os.Symlink(fifo, p)
		}, "not a regular file"},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "not a regular file"},
		{"a file too large", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(MaxResultBytes + 1)
		}, "larger than 64MiB"},
	} {
		for _, h := range []struct {
			harness string
			file    string
			read    func([]string, Options) (Import, error)
		}{
			{"harbor", "trial__abc/result.json", Harbor},
			{"terminal-bench", "results.json", TerminalBench},
		} {
			dir := t.TempDir()
			path := filepath.Join(dir, h.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "run_metadata.json"), []byte(`{"agent_name":"a"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := h.read([]string{dir}, Options{})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
					t.Errorf("%s, %s: %v, want %q naming %s", h.harness, c.name, err, c.want, path)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("%s, %s: the import still reads after 20 s", h.harness, c.name)
			}
		}
	}
}
