package e2e

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// TestBinaryReadsNeverFollowASwappedLink: the agent (the real test agent, a child of the real
// bridge) reads a file in a workspace folder 3,000 times with fs/read_text_file while the test
// swaps that folder with a link to a folder outside the workspace (atomically, with
// RENAME_EXCHANGE, as fast as it can). Some reads find the link and are refused, some read the
// file inside; not one returns the text of the file outside.
func TestBinaryReadsNeverFollowASwappedLink(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("swaps a folder with a link by renameat2(RENAME_EXCHANGE), which only Linux has; the other platforms' reads are tested in package workspace")
	}
	_, agent := binaries(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	testutil.WriteFiles(t, base, map[string]string{"ws/d/f.txt": "INSIDE\n", "outside/d/f.txt": "OUTSIDE secret\n"})
	link := filepath.Join(ws, "d-link")
	if err := os.Symlink(filepath.Join(outside, "d"), link); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(base, "agent.jsonl")
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(ws), ProcessID: os.Getpid(),
		Options: agentOption(agent, "--log", agentLog, "--read", filepath.Join(ws, "d", "f.txt"), "--read-count", "3000")})
	var swaps atomic.Int64
	stop := make(chan struct{})
	swapped := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				swapped <- nil
				return
			default:
			}
			if err := renameExchange(filepath.Join(ws, "d"), link); err != nil {
				swapped <- err
				return
			}
			swaps.Add(1)
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for !agentLogHas(agentLog, "test/readsDone") {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	if err := <-swapped; err != nil {
		t.Fatalf("swap: %v", err)
	}
	var inside, outsideReads, refused int
	for _, m := range readAgentLog(t, agentLog) {
		if m["method"] != "test/read" {
			continue
		}
		p, _ := m["params"].(map[string]any)
		content, _ := p["content"].(string)
		switch {
		case p["error"] != nil:
			refused++
		case strings.Contains(content, "OUTSIDE"):
			outsideReads++
		case content == "INSIDE\n":
			inside++
		}
	}
	t.Logf("%d swaps; of %d reads, %d read the file inside, %d were refused, %d read the file outside", swaps.Load(), inside+refused+outsideReads, inside, refused, outsideReads)
	if outsideReads > 0 {
		t.Fatalf("%d reads returned the text of the file outside the workspace", outsideReads)
	}
	if inside+refused+outsideReads != 3000 {
		t.Fatalf("the agent logged %d reads, want 3000", inside+refused+outsideReads)
	}
	if inside == 0 || refused == 0 || swaps.Load() < 100 {
		t.Fatalf("the race did not run: %d inside, %d refused, %d swaps", inside, refused, swaps.Load())
	}
}

func agentLogHas(path, method string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), `"method":"`+method+`"`)
}

// TestBinaryEditorInputIsBounded: an editor stream that would take the bridge's memory (one
// header line of 600 MiB without a newline; a Content-Length of 1073741000 followed by that many
// bytes) is refused before the memory is taken: the bridge logs what was wrong and exits, and its
// peak resident memory stays under 100 MB.
func TestBinaryEditorInputIsBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the bridge's peak memory from Linux's rusage (ru_maxrss in KiB)")
	}
	bridge, _ := binaries(t)
	for _, tc := range []struct {
		name, header string
		why          string
	}{
		{"header line of 600 MiB", "Content-Length: 10\r\nX-Pad: ", "a header line longer than 64 KiB"},
		{"Content-Length 1073741000", "Content-Length: 1073741000\r\n\r\n", "Content-Length 1073741000, above the limit of 134217728 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "bridge.log")
			cmd, peak := commandWithOwnPeak(t, bridge, "--log-file", logFile)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Write the header, then 600 MiB of "a" in 1 MiB chunks, until the bridge stops reading.
			w := bufio.NewWriterSize(stdin, 1<<20)
			chunk := []byte(strings.Repeat("a", 1<<20))
			written := 0
			if _, err := w.WriteString(tc.header); err == nil {
				for written < 600<<20 {
					n, err := w.Write(chunk)
					written += n
					if err != nil {
						break
					}
				}
				_ = w.Flush()
			}
			_ = stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(exitWait):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("the bridge did not exit; %s", whereItStopped(logFile))
			}
			rss := peak()
			log, _ := os.ReadFile(logFile)
			t.Logf("wrote %d KiB before the bridge stopped reading; its peak resident memory: %.1f MB", written>>10, float64(rss)/1e6)
			if rss > 100e6 {
				t.Errorf("peak resident memory %.1f MB, want under 100 MB", float64(rss)/1e6)
			}
			if !strings.Contains(string(log), tc.why) || !strings.Contains(string(log), "the editor sent a frame the bridge refuses") {
				t.Errorf("the log does not say %q:\n%s", tc.why, log)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
		})
	}
}

// TestBinaryAnswersEveryAgentRequest: the agent sends, before each answer, a request whose method
// is empty and session/update as a request; each gets -32600, and suggestions go on.
func TestBinaryAnswersEveryAgentRequest(t *testing.T) {
	s := startFaultSession(t, "requests")
	uri := s.open("a.go")
	s.wantOne(uri)
	s.wantOne(uri)
	deadline := time.Now().Add(10 * time.Second)
	var answers []map[string]any
	for len(answers) < 4 && time.Now().Before(deadline) {
		answers = s.agentReceived("test/rawAnswer")
		time.Sleep(20 * time.Millisecond)
	}
	if len(answers) != 4 {
		t.Fatalf("%d answers to the 4 bad requests: %v", len(answers), answers)
	}
	for _, a := range answers {
		p, _ := a["params"].(map[string]any)
		e, _ := p["error"].(map[string]any)
		if code, _ := e["code"].(float64); code != -32600 {
			t.Errorf("answer %v; want error -32600", p)
		}
	}
	log := s.finish()
	wantFault(t, log, "invalid-request", "session/update", 2, 2)
	empty := log.count(func(e logEntry) bool {
		return e.str("fault") == "invalid-request" && e.str("method") == "" && e.str("why") == "the request has an empty method"
	})
	if empty != 1 {
		t.Errorf("the request with an empty method is logged %d times, want once (the repeat counted):\n%s", empty, log)
	}
}
