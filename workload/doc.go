// Package workload is the synthetic agent that runs inside built-in task
// containers: it replays a seeded trajectory with real memory use, real CPU
// work and output shaped like the tool it stands for (pip, make, pytest).
//
// The same static binary is PID 1 of the container ("idle"), each step
// ("run"), and the children a step spawns ("child").
package workload
