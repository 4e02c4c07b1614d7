package perf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair of w×h cells.
func openPTY(w, h int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(w), Row: uint16(h)}); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

// firstFrame starts bin args on a 200×50 pty and returns the time from
// the exec to the first frame on the terminal: the alternate screen
// entered and then the header (the first line of every screen) drawn. Then it ends the
// console with SIGTERM (which it takes as an interrupt) and waits for it.
func firstFrame(bin string, args []string) (time.Duration, error) {
	master, slave, err := openPTY(200, 50)
	if err != nil {
		return 0, err
	}
	defer master.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		slave.Close()
		return 0, err
	}
	slave.Close()
	done := make(chan error, 1)
	go func() {
		var seen []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := master.Read(buf)
			// Answer as a terminal does: the background colour (OSC 11)
			// and the cursor position (DSR), which termenv asks before
			// the first frame and waits for.
			if bytes.Contains(buf[:n], []byte("\x1b]11;?")) {
				master.WriteString("\x1b]11;rgb:0000/0000/0000\x1b\\")
			}
			if bytes.Contains(buf[:n], []byte("\x1b[6n")) {
				master.WriteString("\x1b[1;1R")
			}
			seen = append(seen, buf[:n]...)
			if i := bytes.Index(seen, []byte("\x1b[?1049h")); i >= 0 && bytes.Contains(seen[i:], []byte("headroom")) {
				done <- nil
				break
			}
			if err != nil {
				done <- fmt.Errorf("the console wrote no frame: %v\n%q", err, seen)
				return
			}
		}
		for { // drain until the console has gone, so it never blocks writing
			if _, err := master.Read(buf); err != nil {
				return
			}
		}
	}()
	var d time.Duration
	select {
	case err = <-done:
		d = time.Since(start)
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("no first frame within 30 s")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
	return d, err
}

// firstFrames measures firstFrame n times (after one unmeasured run that
// warms the page cache) and returns the times sorted.
func firstFrames(bin string, args []string, n int) ([]time.Duration, error) {
	if _, err := firstFrame(bin, args); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < n; i++ {
		d, err := firstFrame(bin, args)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
