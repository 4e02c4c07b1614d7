// Package docker is the runner's backend on a Docker Engine: one idle
// container per trial, steps as execs, memory read from the container's
// cgroup files at 20 Hz, OOM kills from one events subscription.
package docker
