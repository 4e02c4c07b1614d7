// Command smoke is the workload of kube/smoke.sh, run FROM scratch in pods of
// the local cluster (no shell there):
//
//	smoke alloc MIB   touch MIB MiB of memory, then exit 0 (an OOM kill ends it first)
//	smoke sleep       print a line, then wait for SIGTERM
//	smoke echo        copy stdin lines to stdout as "echo: LINE" until EOF
//	smoke cgroup      print the memory cgroup files the container can read
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// The files an in-pod probe would read: cgroup v1 first, then v2.
var cgroupFiles = []string{
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
	"/sys/fs/cgroup/memory/memory.usage_in_bytes",
	"/sys/fs/cgroup/memory/memory.max_usage_in_bytes",
	"/sys/fs/cgroup/memory/memory.failcnt",
	"/sys/fs/cgroup/memory/memory.oom_control",
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory.current",
	"/sys/fs/cgroup/memory.peak",
	"/sys/fs/cgroup/memory.events",
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: smoke alloc MIB | sleep | echo | cgroup")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "alloc":
		mib, err := strconv.Atoi(os.Args[len(os.Args)-1])
		if err != nil || mib <= 0 {
			fmt.Fprintln(os.Stderr, "smoke alloc: want a positive number of MiB")
			os.Exit(2)
		}
		held := make([][]byte, 0, mib)
		for i := 1; i <= mib; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			held = append(held, b)
			if i%50 == 0 {
				fmt.Printf("smoke: %d MiB touched\n", i)
			}
		}
		fmt.Printf("smoke: all %d MiB touched, not killed\n", len(held))
	case "sleep":
		fmt.Println("smoke: sleeping until SIGTERM")
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
	case "echo":
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println("echo: " + in.Text())
		}
	case "cgroup":
		found := 0
		for _, f := range cgroupFiles {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			found++
			fmt.Printf("%s: %s\n", f, strings.Join(strings.Fields(string(b)), " "))
		}
		if found == 0 {
			fmt.Fprintln(os.Stderr, "smoke cgroup: no memory cgroup file readable")
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "smoke: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}
