// Command testrelay is the floor of the end-to-end round-trip benchmark (e2e
// BenchmarkEndToEndRoundTrip): the least a process between an editor and an agent can do. It starts
// the agent command given as its arguments and relays messages both ways, converting the framing
// (Content-Length headers on its own stdin and stdout, one JSON message per line on the agent's),
// without reading them. It shares no code with the bridge.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testrelay AGENT [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	go func() {
		// Agent to client: each line, framed.
		r := bufio.NewReaderSize(out, 64<<10)
		w := bufio.NewWriterSize(os.Stdout, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
				fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(line))
				_, _ = w.Write(line)
				if r.Buffered() == 0 {
					_ = w.Flush()
				}
			}
			if err != nil {
				_ = w.Flush()
				os.Exit(0)
			}
		}
	}()
	// Client to agent: each framed body, as a line.
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(in, 64<<10)
	for {
		n := -1
		for {
			h, err := r.ReadSlice('\n')
			if err != nil {
				_ = in.Close()
				_ = cmd.Wait()
				return
			}
			h = bytes.TrimRight(h, "\r\n")
			if len(h) == 0 {
				break
			}
			if v, ok := bytes.CutPrefix(h, []byte("Content-Length: ")); ok {
				n, _ = strconv.Atoi(string(v))
			}
		}
		if n < 0 {
			fatal(fmt.Errorf("a frame without Content-Length"))
		}
		body := make([]byte, n+1)
		if _, err := io.ReadFull(r, body[:n]); err != nil {
			fatal(err)
		}
		body[n] = '\n'
		_, _ = w.Write(body)
		if r.Buffered() == 0 {
			_ = w.Flush()
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "testrelay:", err)
	os.Exit(1)
}
