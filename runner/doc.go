// Package runner turns a plan into trials on a Backend and emits one typed
// stream of events; the console, the headless command and the experiment
// store all consume that same stream.
package runner
