package taskfile

import (
	"reflect"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// What a Dockerfile has the engine fetch by itself: ADD's URLs and git
// addresses, FROM's images (not an earlier stage, not scratch); COPY and
// ADD of the context's files are not fetches.
func TestFetches(t *testing.T) {
	text := "FROM golang:1.24 AS build\n" +
		"ADD http://127.0.0.1:18777/secret.txt /a\n" +
		"ADD --chown=1:1 https://example.com/x.tgz git@github.com:o/r.git /b/\n" +
		"ADD local.txt /c\n" +
		"COPY http://not-fetched/ /d\n" +
		"FROM build\n" +
		"FROM scratch\n" +
		"FROM reg.local:5000/base\n"
	got := fetches("Dockerfile", parseDockerfile(text))
	want := []model.Fetch{
		{At: "Dockerfile:1: FROM", Source: "golang:1.24", Image: true},
		{At: "Dockerfile:2: ADD", Source: "http://127.0.0.1:18777/secret.txt"},
		{At: "Dockerfile:3: ADD", Source: "https://example.com/x.tgz"},
		{At: "Dockerfile:3: ADD", Source: "git@github.com:o/r.git"},
		{At: "Dockerfile:8: FROM", Source: "reg.local:5000/base", Image: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fetches:\n got %+v\nwant %+v", got, want)
	}
}
