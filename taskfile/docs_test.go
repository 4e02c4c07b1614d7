package taskfile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// docs/TASKS.md names every field a step's workload table takes and every
// built-in task: a user writes a task from that page (a new user was sent
// to a Go file that no longer existed, and found a built-in task the
// console ran missing from its table).
func TestTasksPageNamesEveryWorkloadFieldAndBuiltin(t *testing.T) {
	page, err := os.ReadFile("../docs/TASKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	pt := reflect.TypeOf(Profile{})
	for i := 0; i < pt.NumField(); i++ {
		if tag := pt.Field(i).Tag.Get("toml"); !strings.Contains(doc, "`"+tag+"`") {
			t.Errorf("docs/TASKS.md does not name the workload field `%s`", tag)
		}
	}
	files, _ := filepath.Glob("builtin/*.toml")
	for _, f := range files {
		name := "builtin/" + strings.TrimSuffix(filepath.Base(f), ".toml")
		if strings.HasPrefix(filepath.Base(f), "real-") {
			continue // the real tasks have their own section, by task name
		}
		if !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("docs/TASKS.md's table of built-in tasks lacks `%s`", name)
		}
	}
}
