package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// mergeBomb is a compose file whose x-aN merges ten of x-a(N-1), depth
// levels deep, and whose service main merges the last: the 682-byte file
// of round five's finding 3 at depth 9.
func mergeBomb(depth int) string {
	var b strings.Builder
	b.WriteString("x-a0: &a0\n  K: v\n")
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "x-a%d: &a%d\n  <<: [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	fmt.Fprintf(&b, "services:\n  main:\n    <<: *a%d\n    environment:\n      FOO: bar\n", depth)
	return b.String()
}

// Each merged mapping is merged once: the depth-9 file's service costs a
// few steps a level, where following every alias again took 10^9 (the
// test then does not fail, it hangs: go test's -timeout names it).
func TestComposeMergeEachMappingOnce(t *testing.T) {
	src := mergeBomb(9)
	if len(src) != 682 {
		t.Fatalf("mergeBomb(9) is %d bytes; round five's file is 682", len(src))
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	main := mapping(mapping(root.Content[0])["services"])["main"]
	m := newMerger(0)
	got := m.pairs(main)
	var keys []string
	for _, kv := range got {
		keys = append(keys, kv[0].Value)
	}
	if strings.Join(keys, ",") != "environment,K" {
		t.Errorf("service main's keys = %q; want its own environment, then K merged from x-a0", keys)
	}
	// main, x-a9 ... x-a1 each looked at once and merging ten of the level
	// below (one pair each time): 1 + 9*(1+10*2) ... at most 200.
	if m.work > 200 {
		t.Errorf("merging service main took %d steps; want at most 200 (each anchored mapping merged once, remembered after)", m.work)
	}

	task := composeTask(".")
	if _, err := parseCompose("docker-compose.yaml", []byte(src), ".", harborHarness(&task, ".", "")); err != nil {
		t.Errorf("the depth-9 file is cheap to read once merges are remembered, yet: %v", err)
	}
}

// A file whose merges are costly even merged once each (a mapping of many
// keys merged many times into many mappings) is refused at the merge key
// where the budget ran out, before anything follows its merges.
func TestComposeMergeBudgetRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("x-k: &k\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "  k%d: v\n", i)
	}
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "x-b%d:\n  <<: [%s]\n", i, strings.TrimSuffix(strings.Repeat("*k, ", 30), ", "))
	}
	b.WriteString("services:\n  main:\n    image: x\n")
	src := b.String()
	task := composeTask(".")
	_, err := parseCompose("docker-compose.yaml", []byte(src), ".", harborHarness(&task, ".", ""))
	if err == nil {
		t.Fatal("40 mappings each merging a 300-key mapping 30 times (360000 pairs merged) were read; want them refused by the merge budget")
	}
	mm := regexp.MustCompile(`^docker-compose\.yaml:(\d+): the merge key "<<" `).FindStringSubmatch(err.Error())
	if mm == nil || !strings.Contains(err.Error(), "merge each x- block once") {
		t.Fatalf("error %q: want docker-compose.yaml:LINE: naming the merge key and what to do", err)
	}
	line, _ := strconv.Atoi(mm[1])
	if lines := strings.Split(src, "\n"); line < 1 || line > len(lines) || !strings.HasPrefix(lines[line-1], "  <<: [") {
		t.Errorf("error %q names line %d; want the line of a merge key", err, line)
	}
}

// Merges in compose files as real tasks write them (x- blocks merged into
// services, a block merging another) stay well inside the budget and mean
// what they meant.
func TestComposeMergeRealUse(t *testing.T) {
	src := `x-env: &env
  environment:
    A: "1"
x-common: &common
  <<: *env
  restart: "no"
  mem_limit: 1g
services:
  main:
    <<: *common
    image: ${MAIN_IMAGE_NAME}
  db:
    <<: [*common, *env]
    image: postgres:16
    mem_limit: 512m
`
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	d := &composeDoc{path: "docker-compose.yaml"}
	if err := d.checkMerges(&root); err != nil {
		t.Fatal(err)
	}
	db := mapping(mapping(mapping(root.Content[0])["services"])["db"])
	if db["mem_limit"].Value != "512m" || db["restart"].Value != "no" || mapping(db["environment"])["A"].Value != "1" {
		t.Errorf("service db merged = mem_limit %q restart %q; want its own 512m over the block's 1g, and the block's restart and environment", db["mem_limit"].Value, db["restart"].Value)
	}
}

// A terminal-bench 1 task.yaml is decoded into Go values by yaml.v3, whose
// alias-expansion ratio refuses the same nesting of merges: the loader
// answers at once rather than following 10^9 merges.
func TestTBOldMergeBombRefused(t *testing.T) {
	dir := t.TempDir()
	bomb := strings.TrimSuffix(mergeBomb(9), "services:\n  main:\n    <<: *a9\n    environment:\n      FOO: bar\n")
	yml := bomb + "<<: *a9\ninstruction: Fix the bug.\n"
	if err := os.WriteFile(filepath.Join(dir, "task.yaml"), []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadTBOld(dir)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("loadTBOld on a nine-deep merge bomb = %v; want yaml.v3's excessive aliasing refusal", err)
	}
}
