// Command hr-workload is the built-in tasks' synthetic agent, built alone
// (tests use it to make a small image; headroom embeds the same code).
package main

import (
	"os"

	"github.com/headroom-eval/headroom/workload"
)

func main() { os.Exit(workload.Main(os.Args[1:], os.Stdout, os.Stderr)) }
