// Command echoserver is the sidecar of the compose tests: "serve" holds
// 24 MiB of touched memory, writes $ECHO_GREETING to the file
// $ECHO_SHARE (in a volume it shares) and greets every TCP connection on
// :7000 with it; "probe" is its healthcheck.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "serve":
		serve()
	case "probe":
		c, err := net.DialTimeout("tcp", "127.0.0.1:7000", time.Second)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		c.Close()
	default:
		fmt.Fprintln(os.Stderr, "usage: echoserver serve|probe")
		os.Exit(2)
	}
}

var ballast []byte

func serve() {
	ballast = make([]byte, 24<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	if p := os.Getenv("ECHO_SHARE"); p != "" {
		if err := os.WriteFile(p, []byte(os.Getenv("ECHO_GREETING")+"\n"), 0o644); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("listening on :7000")
	for {
		c, err := l.Accept()
		if err != nil {
			continue
		}
		fmt.Fprintln(c, os.Getenv("ECHO_GREETING"))
		c.Close()
	}
}
