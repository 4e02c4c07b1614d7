// Package replay runs another harness's recorded agent session again:
// a Harbor trial's ATIF trajectory or a terminal-bench trial's typed
// keys become an agent whose steps are the recorded actions, in order,
// with the recorded think time between them, and each replayed trial is
// compared with its recording, action by action.
package replay
