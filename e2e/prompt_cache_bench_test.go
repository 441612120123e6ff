package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

// The workspace of BenchmarkPromptCache: the file typed in (cacheMain, 263 lines) and two other
// files the user visited before (cacheTotal, cacheReceipt).
var (
	cacheTotal = `package shop

import "strings"

// Item is one line of a cart.
type Item struct {
	Name  string
	Price int // in cents
	Qty   int
}

// Total adds the prices of the items, each times its quantity.
func Total(items []Item) int {
	sum := 0
	for _, it := range items {
		sum += it.Price * it.Qty
	}
	return sum
}

// Discount is what a code takes off the items' total, in cents.
func Discount(items []Item, code string) int {
	switch strings.ToUpper(code) {
	case "SPRING":
		return Total(items) / 10
	case "STAFF":
		return Total(items) / 4
	}
	return 0
}

// Heaviest is the item bought in the largest quantity.
func Heaviest(items []Item) (Item, bool) {
	var best Item
	found := false
	for _, it := range items {
		if !found || it.Qty > best.Qty {
			best, found = it, true
		}
	}
	return best, found
}
`
	cacheReceipt = `package shop

import (
	"fmt"
	"io"
)

// Receipt writes what was bought, one line per item, and the total.
func Receipt(w io.Writer, items []Item, total int) error {
	for _, it := range items {
		if _, err := fmt.Fprintf(w, "%-20s %3d x %6.2f\n", it.Name, it.Qty, float64(it.Price)/100); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%-20s %13.2f\n", "total", float64(total)/100)
	return err
}

// Money formats cents as a price.
func Money(cents int) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}
`
)

// cacheMain is a 263-line file with a function at line 209 (Checkout) where the user types.
func cacheMain() string {
	var b strings.Builder
	b.WriteString("package shop\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"os\"\n)\n\n")
	b.WriteString("// Cart is what a customer is about to buy.\ntype Cart struct {\n\tCustomer string\n\tItems    []Item\n}\n\n")
	for i := range 24 {
		fmt.Fprintf(&b, "// rule%d checks one rule of the shop on a cart.\nfunc rule%d(c Cart) error {\n\tif len(c.Items) > %d {\n\t\treturn errors.New(\"too many items for rule %d\")\n\t}\n\treturn nil\n}\n\n", i, i, 10+i, i)
	}
	b.WriteString("// Checkout checks the cart and prints its receipt.\nfunc Checkout(c Cart) error {\n\tsum := Total(c.Items)\n\tif err := Receipt(os.Stdout, c.Items, sum); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\n")
	for i := range 6 {
		fmt.Fprintf(&b, "// report%d prints part %d of the day's report.\nfunc report%d(carts []Cart) {\n\tfor _, c := range carts {\n\t\tfmt.Println(c.Customer, Total(c.Items), %d)\n\t}\n}\n\n", i, i, i, i)
	}
	b.WriteString("func main() {\n\tc := Cart{Customer: \"ana\", Items: []Item{{Name: \"tea\", Price: 350, Qty: 2}}}\n\tif err := Checkout(c); err != nil {\n\t\tfmt.Println(err)\n\t}\n}\n")
	return b.String()
}

// cacheTyping is what the user types in cacheMain: 40 edits, each a word or so inserted where the
// previous one ended, in three places (a field added to Cart, a discount in Checkout, the code
// set in main). Each place is named by the text the typing starts after.
var cacheTyping = []struct {
	after string
	words []string
}{
	{"\tsum := Total(c.Items)", []string{"\n\tdiscount", " :=", " Discount(c.Items,", " c.Code)", "\n\tif", " discount", " >", " sum", " {", "\n\t\tdiscount", " =", " sum", "\n\t}", "\n\tsum", " -=", " discount", "\n\tif", " discount", " >", " 0", " {", "\n\t\tfmt.Printf(\"saved", " %s\\n\",", " Money(discount))", "\n\t}"}},
	{"\tItems    []Item", []string{"\n\tCode", "     string", " //", " discount", " code"}},
	{"Items: []Item{{Name: \"tea\", Price: 350, Qty: 2}}}", []string{"\n\tc.Code", " =", " \"SPRING\"", "\n\tc.Items", " =", " append(c.Items,", " Item{Name:", " \"cake\",", " Price:", " 420})"}},
}

// BenchmarkPromptCache measures how much of each prompt the real llama-server evaluates anew,
// per prompt format served by it (issue 37: "Keep the server's cache warm"): the real agent
// (acp-lsp-bridge agent, over ACP as the bridge drives it) with two other files open and visited,
// asked for a suggestion after each of 40 edits in one file; the server's timings for each answer
// (prompt_n evaluated, cache_n taken from its cache) come from the agent's debug log. It reports,
// per format, the median share prompt_n / (prompt_n + cache_n) over the 40 answers
// ("fim-new-share", "chat-new-share", …; budget: at most 0.35 for fim and chat, the others
// reported; docs/model-agent.md, "The server's prompt cache", says why they are higher).
//
// The server runs as the other tests run it (-c 8192 -np 2), with --cache-reuse 256 as llama.vim
// asks its users to run it for FIM: /infill keeps only the last three quarters of a batch of the
// text above the cursor (1,536 tokens by default), so in a long file the start of that text moves
// whenever the cursor goes to another line, and only --cache-reuse lets the server take the rest
// of the prompt from its cache, shifted (here at the third place, the end of the file: 24 tokens
// evaluated instead of 1,559 at the first key there). It changes no median here, only that
// total: most keys are typed on a line whose text above stays as it was.
func BenchmarkPromptCache(b *testing.B) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	l := startLlamaServer(b, "--cache-reuse", "256")
	bridge, _ := binaries(b)
	formats := []struct{ name, model, format string }{
		{"fim", "qwen2.5-coder-1.5b", "fim"},
		{"chat", "qwen2.5-coder-7b-instruct", "chat"},
		{"zeta1", "zeta", "zeta1"},
		{"zeta2", "zeta-2", "zeta2"},
		{"zeta21", "zeta-2.1", "zeta2.1"},
		{"sweep", "sweep-next-edit-1.5b", "sweep"},
		{"sweep7b", "sweep-next-edit-v2-7b", "sweep"},
		{"instinct", "instinct", "instinct"},
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, f := range formats {
			ts := cacheSession(b, bridge, l.URL, f.model, f.format)
			var prompt, cached int
			for _, t := range ts {
				prompt += t.PromptN
				cached += t.CacheN
			}
			b.Logf("%s: %d answers, median share evaluated anew %.3f; %d prompt tokens evaluated, %d from the cache", f.name, len(ts), eval.MedianShare(ts), prompt, cached)
			b.ReportMetric(eval.MedianShare(ts), f.name+"-new-share")
		}
	}
}

// cacheSession runs one agent for model in format against the server at url through the typing of
// cacheTyping, and returns the server's timings of the answers, in order.
func cacheSession(b *testing.B, bridge, url, model, format string) []eval.Timings {
	b.Helper()
	var mu sync.Mutex
	var timings []eval.Timings
	var tail []string
	opts := acpside.ClientOptions(zerolog.Nop(), "bench")
	opts.Events = func(e acpside.Event) {
		if e.Kind != acpside.EventStderr {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if t, ok := eval.TimingsFromLog(e.Line); ok {
			timings = append(timings, t)
		}
		tail = append(tail, e.Line)
		if len(tail) > 20 {
			tail = tail[1:]
		}
	}
	answers := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(timings)
	}
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		b.Fatalf(format+"\nthe agent's log ends:\n%s", append(args, strings.Join(tail, "\n"))...)
	}
	root := b.TempDir()
	// At most 16 tokens an answer: what is measured is the prompt; the tiny model's text is
	// gibberish, which the agent keeps back. --no-prefetch: one request a key typed, as the
	// answer each key waits for is the one counted.
	agent := startACPAgent(b, root, opts, bridge, "agent", "--model-url", url, "--model", model,
		"--model-format", format, "--max-tokens", "16", "--timeout", "60s", "--verbose", "--no-prefetch")
	defer agent.Close(context.Background()) // now, not with the benchmark: the next format's agent follows
	ctx := context.Background()
	docURI := func(name string) string { return string(uri.File(filepath.Join(root, name))) }
	open := func(name, text string) {
		if err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: docURI(name), LanguageId: "go", Version: 1, Text: text}); err != nil {
			b.Fatal(err)
		}
	}
	focus := func(name string, line int) {
		if !agent.Events().DidFocus {
			return
		}
		at := acp.UnstablePosition{Line: line}
		if err := agent.DidFocus(ctx, acp.UnstableDidFocusDocumentNotification{Uri: docURI(name), Version: 1, Position: at, VisibleRange: acp.UnstableRange{Start: at, End: at}}); err != nil {
			b.Fatal(err)
		}
	}
	// The user read Discount in total.go and Receipt in receipt.go, then came back to main.go.
	open("total.go", cacheTotal)
	open("receipt.go", cacheReceipt)
	focus("total.go", 22)
	focus("receipt.go", 8)
	text := cacheMain()
	open("main.go", text)
	focus("main.go", 0)
	main := docURI("main.go")
	version := 1
	for _, place := range cacheTyping {
		at := strings.Index(text, place.after)
		if at < 0 {
			b.Fatalf("no %q in main.go", place.after)
		}
		at += len(place.after)
		for _, w := range place.words {
			pos := cachePosition(text, at)
			text = text[:at] + w + text[at:]
			at += len(w)
			version++
			if err := agent.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: main, Version: version, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{{
				Range: &acp.UnstableRange{Start: pos, End: pos}, Text: w,
			}}}); err != nil {
				b.Fatal(err)
			}
			before := answers()
			sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
			_, _, err := agent.SuggestWithNote(sctx, acp.UnstableSuggestNesRequest{Uri: main, Version: version, Position: cachePosition(text, at), TriggerKind: acp.UnstableNesTriggerKindAutomatic})
			cancel()
			if err != nil {
				fail("%s, edit %d: nes/suggest: %v", format, version-1, err)
			}
			// The answer's log line comes once the server has ended it (a streamed answer may
			// have been shown before).
			deadline := time.Now().Add(30 * time.Second)
			for answers() <= before {
				if time.Now().After(deadline) {
					fail("%s, edit %d: the agent logged no answer with the server's timings", format, version-1)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]eval.Timings(nil), timings...)
}

// startACPAgent starts the agent command in root, as the bridge would (initialize, then nes/start
// with root as the workspace folder), and ends it with the test.
func startACPAgent(t testing.TB, root string, opts acpside.Options, command ...string) *acpside.Agent {
	t.Helper()
	agent, err := acpside.Start(acpside.Command{Path: command[0], Args: command[1:], Dir: root}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Close(context.Background()) })
	ctx := context.Background()
	if _, err := agent.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	ws := string(uri.File(root))
	if err := agent.StartNES(ctx, acp.UnstableStartNesRequest{WorkspaceUri: &ws, WorkspaceFolders: []acp.UnstableWorkspaceFolder{{Uri: ws, Name: filepath.Base(root)}}}); err != nil {
		t.Fatal(err)
	}
	return agent
}

// cachePosition is the position of offset at in an ASCII text (every encoding's columns are its
// bytes).
func cachePosition(text string, at int) acp.UnstablePosition {
	line := strings.Count(text[:at], "\n")
	return acp.UnstablePosition{Line: line, Character: at - (strings.LastIndexByte(text[:at], '\n') + 1)}
}
