// Package ui will hold the Bubble Tea console; it consumes the runner's
// event stream exactly as the headless run command does.
package ui
