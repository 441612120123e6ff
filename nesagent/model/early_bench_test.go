package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Early answer budget (issue 37): a server that streams at 10 ms a token after a 50 ms first
// token, a 21-line region with its change on line 2.
const (
	firstToken   = 50 * time.Millisecond
	perToken     = 10 * time.Millisecond
	tokenBytes   = 4 // about a token of code
	earlyRuns    = 15
	earlyChanged = 1 // the region's line that changes (line 2)
)

// pacedZeta2 streams a Zeta 2 rewrite of the region, with line earlyChanged and line 15 edited, a
// token of tokenBytes at a time: the first after firstToken, then one every perToken. ended is
// told when the whole answer has been sent.
func pacedZeta2(ended chan<- time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			http.NotFound(w, r)
			return
		}
		var body []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Body.Read(buf)
			body = append(body, buf[:n]...)
			if err != nil {
				break
			}
		}
		prompt := string(body)
		i := strings.Index(prompt, `<<<<<<< CURRENT\n`)
		j := strings.Index(prompt, `=======\n`)
		if i < 0 || j < i {
			http.Error(w, "not a Zeta 2 prompt", http.StatusBadRequest)
			return
		}
		region := strings.ReplaceAll(strings.ReplaceAll(prompt[i+len(`<<<<<<< CURRENT\n`):j], `\n`, "\n"), `\t`, "\t")
		region = strings.ReplaceAll(region, zetaCursor, "")
		lines := strings.Split(strings.TrimSuffix(region, "\n"), "\n")
		lines[earlyChanged] = strings.Replace(lines[earlyChanged], "g(", "h(", 1)
		lines[15] = strings.Replace(lines[15], "g(", "h(", 1)
		answer := strings.Join(lines, "\n") + "\n>>>>>>> UPDATED\n"
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		wait := firstToken
		for k := 0; k < len(answer); k += tokenBytes {
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
				return
			}
			wait = perToken
			tok := answer[k:min(k+tokenBytes, len(answer))]
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":%q}]}\n\n", tok)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		ended <- time.Now()
	}
}

// BenchmarkEarlyAnswer measures, over earlyRuns requests, the time from the request to the
// suggestion against the limit: the time the server takes to stream through the changed hunk
// and its two confirming lines (earlyFloor). It reports the median ratio (budget: at most 1.25),
// the median time to the whole answer beside it, and the time from the accept to the next
// suggestion, the rest of the same answer (budget: at most 30 ms).
func BenchmarkEarlyAnswer(b *testing.B) {
	ended := make(chan time.Time, 1)
	srv := httptest.NewServer(pacedZeta2(ended))
	defer srv.Close()
	// A 21-line file, all of it the region.
	var doc strings.Builder
	for i := 0; i < 21; i++ {
		fmt.Fprintf(&doc, "\tv%d := g(%d)\n", i, i)
	}
	text := doc.String()
	req := nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
	// The limit: the tokens through the end of the line after the two confirming ones.
	region := zeta2Region(b, text)
	through := 0
	for i, l := range strings.Split(region, "\n") {
		through += len(l) + 1
		if i == earlyChanged+2 {
			break
		}
	}
	// The changed line is as long as before ("g(" for "h("): the same tokens.
	limit := firstToken + time.Duration((through+tokenBytes-1)/tokenBytes-1)*perToken
	var early, whole, next []time.Duration
	for i := 0; i < b.N; i++ {
		for r := 0; r < earlyRuns; r++ {
			eng, err := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", Timeout: 30 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			began := time.Now()
			sugs, err := eng.Suggest(context.Background(), req)
			if err != nil || len(sugs) != 1 {
				b.Fatalf("%+v %v", sugs, err)
			}
			early = append(early, time.Since(began))
			accepted := applyEdits(text, sugs[0].Edits)
			eng.(nesagent.Watcher).DocumentChanged(req.URI, accepted)
			whole = append(whole, (<-ended).Sub(began))
			nreq := req
			nreq.Text = accepted
			t0 := time.Now()
			sugs, err = eng.Suggest(context.Background(), nreq)
			if err != nil || len(sugs) != 1 {
				b.Fatalf("the next suggestion: %+v %v", sugs, err)
			}
			next = append(next, time.Since(t0))
		}
	}
	b.ReportMetric(float64(med(early))/float64(limit), "early/limit")
	b.ReportMetric(float64(med(early).Microseconds())/1000, "early-ms")
	b.ReportMetric(float64(limit.Microseconds())/1000, "limit-ms")
	b.ReportMetric(float64(med(whole).Microseconds())/1000, "whole-ms")
	b.ReportMetric(float64(med(next).Microseconds())/1000, "accept-to-next-ms")
}

// med is the median of d.
func med(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// prefetchModelTime is how long the benchmark's chat model takes to answer.
const prefetchModelTime = 100 * time.Millisecond

// BenchmarkNextAtTheAcceptPrefetched measures, over earlyRuns suggestions of a format that does
// not stream (chat), the time from the accept to the next suggestion when that one was
// prefetched as if the first were accepted (prefetch.go), while the user read the first: the model
// (prefetchModelTime a request) has answered it by the accept (budget: at most 30 ms). The next
// suggestion's own request to the model is not made: the figure beside it, the model's time, is
// what the accept would wait without it.
func BenchmarkNextAtTheAcceptPrefetched(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, answer, ok := finishTodo(body)
		if !ok {
			http.Error(w, "not a chat request with a region", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(prefetchModelTime):
			chatAnswer(answer)(w, r, body)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	var next []time.Duration
	for i := 0; i < b.N; i++ {
		for r := 0; r < earlyRuns; r++ {
			eng, err := New(Config{URL: srv.URL, Model: "fake-coder", Format: "chat", Timeout: 30 * time.Second, Prefetch: true})
			if err != nil {
				b.Fatal(err)
			}
			// A request at the accept of a suggestion before it: its answer is prefetched from.
			req := atAccept(eng, todoRequest(todoDoc))
			sugs, err := eng.Suggest(context.Background(), req)
			if err != nil || len(sugs) != 1 {
				b.Fatalf("%+v %v", sugs, err)
			}
			accepted := applyEdits(req.Text, sugs[0].Edits)
			// The user reads the suggestion: what was prefetched is answered meanwhile.
			e := eng.(*engine)
			e.prefetched.mu.Lock()
			p := e.prefetched.byURI[req.URI]
			e.prefetched.mu.Unlock()
			if p == nil {
				b.Fatal("nothing prefetched")
			}
			<-p.done
			eng.(nesagent.Watcher).DocumentChanged(req.URI, accepted)
			t0 := time.Now()
			sugs, err = eng.Suggest(context.Background(), todoRequest(accepted))
			if err != nil || len(sugs) != 1 {
				b.Fatalf("the next suggestion: %+v %v", sugs, err)
			}
			next = append(next, time.Since(t0))
		}
	}
	b.ReportMetric(float64(med(next).Microseconds())/1000, "prefetched-accept-to-next-ms")
	b.ReportMetric(float64(prefetchModelTime.Microseconds())/1000, "model-ms")
}

// zeta2Region is the region Zeta 2 rewrites for the benchmark's request.
func zeta2Region(b *testing.B, text string) string {
	in := prepare(nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")})
	r := zetaRegions(in, zetaEditableTokens, zetaContextTokens)
	if r.editStart != 0 || r.editEnd != len(text) {
		b.Fatalf("the region is [%d, %d) of %d bytes, want the whole file", r.editStart, r.editEnd, len(text))
	}
	return in.text[r.editStart:r.editEnd]
}

// earlyBenchDoc is a 20-line file of Go, all of it Zeta 2's region: code as a model rewrites it,
// with its blank lines and lone braces.
const earlyBenchDoc = `package p

import "strings"

// count is how many of words are in set.
func count(words []string, set map[string]bool) int {
	n := 0
	for _, w := range words {
		w = strings.ToLower(w)
		if w == "" {
			continue
		}
		if set[w] {
			n++
		}
	}
	return n
}

func main() {}
`

// BenchmarkEarlyReader measures the early reader of a Zeta 2 answer streamed a line a piece, for
// answers of 4 KB, 64 KB and 1 MiB: blank lines (a model that loops on line breaks, or a hostile
// server), and the region rewritten then repeated. ns/op is the CPU an answer costs the
// document's requests, which wait behind it (budget: at most 50 ms for 1 MiB of blank lines);
// ns/KB stays flat across the sizes when the reading is linear in the answer.
func BenchmarkEarlyReader(b *testing.B) {
	req := nesagent.Request{URI: "file:///w/p.go", Text: earlyBenchDoc, Cursor: strings.Index(earlyBenchDoc, "n := 0")}
	c, err := zeta2Format{}.Build(prepare(req), limits{cfg: &Config{}})
	if err != nil {
		b.Fatal(err)
	}
	region := earlyBenchDoc[c.start:c.end]
	if region != earlyBenchDoc {
		b.Fatalf("the region is %q, want the whole file", region)
	}
	read := func(text string) {
		er := newEarlyReader(c.lines, region)
		// A line a piece, as a stream writes them, then the end marker.
		for rest := text; rest != ""; {
			k := strings.IndexByte(rest, '\n') + 1
			er.write(rest[:k])
			rest = rest[k:]
		}
		er.write(">>>>>>> UPDATED\n")
	}
	// The budget's figures, in one sub-benchmark: 1 MiB of blank lines read once (ms, at most
	// 50), and over the same 1 MiB read as 256 answers of 4 KB, in the same run (linear: about 1).
	b.Run("blank/1MiB-vs-4KB", func(b *testing.B) {
		big, small := strings.Repeat("\n", 1<<20), strings.Repeat("\n", 4<<10)
		var tBig, tSmall time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			read(big)
			t1 := time.Now()
			for range 256 {
				read(small)
			}
			tBig, tSmall = tBig+t1.Sub(t0), tSmall+time.Since(t1)
		}
		b.ReportMetric(float64(tBig.Microseconds())/1000/float64(b.N), "1MiB-blank-ms")
		b.ReportMetric(float64(tBig)/float64(tSmall), "1MiB/4KB")
	})
	// The region rewritten with a change on its seventh line, then the region over and over.
	code := strings.Replace(region, "n := 0", "n := len(set) - len(set)", 1)
	for _, answer := range []struct {
		name string
		of   func(size int) string
	}{
		{"blank", func(size int) string { return strings.Repeat("\n", size) }},
		{"code", func(size int) string {
			s := code + strings.Repeat(region, size/len(region))
			return s[:strings.LastIndexByte(s[:size], '\n')+1]
		}},
	} {
		for _, size := range []struct {
			name  string
			bytes int
		}{{"4KB", 4 << 10}, {"64KB", 64 << 10}, {"1MiB", 1 << 20}} {
			text := answer.of(size.bytes)
			b.Run(answer.name+"/"+size.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					read(text)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(text))/1024), "ns/KB")
			})
		}
	}
}
