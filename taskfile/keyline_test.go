package taskfile

import (
	"errors"
	"strings"
	"testing"
)

func TestKeyLine(t *testing.T) {
	data := []byte(`# a task
[task]
name = "x"

[environment]   # resources
cpus = 2
"memory_mb" = -64

[verifier]
timeout_sec = -1
environment.cpus = 3
`)
	for _, c := range []struct {
		table, key string
		want       int
	}{
		{"environment", "cpus", 6},
		{"environment", "memory_mb", 7},
		{"verifier", "timeout_sec", 10},
		{"task", "name", 3},
		{"environment", "storage_mb", 0},
		{"agent", "timeout_sec", 0},
	} {
		if got := keyLine(data, c.table, c.key); got != c.want {
			t.Errorf("keyLine(%s, %s) = %d, want %d", c.table, c.key, got, c.want)
		}
	}
	err := atKeyLine("t.toml", data, errors.New("[environment] memory_mb must be more than 0 (got -64)"))
	if !strings.HasPrefix(err.Error(), "t.toml:7: [environment] memory_mb") {
		t.Errorf("atKeyLine: %v", err)
	}
	// A table named without a key of it in the file: the table's header.
	err = atKeyLine("t.toml", data, errors.New("[verifier] has no command: set command = ..."))
	if !strings.HasPrefix(err.Error(), "t.toml:9: [verifier] has no command") {
		t.Errorf("atKeyLine of a missing key: %v", err)
	}
	if err := atKeyLine("t.toml", data, errors.New("[agent] timeout_sec is missing")); err.Error() != "t.toml: [agent] timeout_sec is missing" {
		t.Errorf("a table not in the file: %v", err)
	}
	if err := atKeyLine("t.toml", data, errors.New("no agents")); err.Error() != "t.toml: no agents" {
		t.Errorf("an error naming no field: %v", err)
	}
}
