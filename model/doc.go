// Package model holds headroom's domain: tasks, resource ratios and the
// policies they imply, the trial plan, outcomes and the outcome matrix.
// It is pure: no I/O, no Docker, no terminal.
package model
