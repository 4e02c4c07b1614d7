// Package taskfile reads task files (headroom's TOML format, close to
// Terminal-Bench 2.0's task.toml) into model.Tasks, and holds the built-in
// catalog embedded in the binary.
package taskfile
