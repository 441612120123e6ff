package model

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// serverStringSites are the places in the package that take a string the server (or the network)
// gave, and that the key is not taken out of right there, each with where it is: an entry is
// where a reviewer said so. TestEveryServerStringIsScrubbed finds every such place in the source;
// one missing from this table (a new path that formats a server's words without scrubber.clean)
// fails it, and so does an entry that is no longer in the source.
var serverStringSites = map[string]string{
	// The key's own runs as CleanText writes them, to look for in cleaned text: no server words.
	"newHostScrubber: nesagent.CleanText": "writes the key, not a server's words, to look for it in cleaned text",
	// The readers quote the body (errorText, preview) in the errors they return to postAs, which
	// cleans each (h.scrub.clean(err.Error())) before it wraps it.
	"readChat: preview":       "returned to postAs, cleaned there",
	"readCompletion: preview": "returned to postAs, cleaned there",
	"readOllama: preview":     "returned to postAs, cleaned there",
	"noChoices: errorText":    "returned by readChat and readCompletion to postAs, cleaned there",
	"noChoices: preview":      "returned by readChat and readCompletion to postAs, cleaned there",
	"readInfill: errorText":   "returned to postAs, cleaned there",
	"readInfill: preview":     "returned to postAs, cleaned there",
	"readHostedFIM: preview":  "returned to postAs, cleaned there",
	"readEvent: errorText":    "returned through readStream to postAs, cleaned there",
	"readEvent: preview":      "returned through readStream to postAs, cleaned there",
	// A hosted service's answer read by its format: an error of the format's read is a Quiet
	// reason, which SuggestWithReason scrubs, and is logged by dropped through the scrubbing
	// logger (scrubHandler).
	"readSweepAPI: preview": "a Quiet reason: scrubbed by SuggestWithReason and the logger",
	// Status lines and headers.
	"guardedClient: Status":                  "the redirect's status, kept in redirectError; transportError cleans re.Error()",
	"httpCompleter.get: Status":              "returned to askKind, which cleans it",
	"httpCompleter.postAs: resp.Header":      "its Content-Type, compared with the streamed types, never shown",
	"httpCompleter.statusError: resp.Header": "its Retry-After, read as seconds or a date (retryAfter), never shown",
	// A version string compared with "" before it is cleaned into the kind's reason.
	"httpCompleter.askKind: Version": "compared with \"\" only; cleaned where it is quoted",
	// Errors' own texts.
	"statusError.Error: err.Error": "the text of an error built of cleaned parts (statusError)",
	"unreachable: err.Error":       "a dial error's cause, returned to transportError and askKind, which clean it",
	// Text made fit to show that is not the server's.
	"httpCompleter.askFIM: nesagent.CleanText": "the user's own --model, not the server's words",
	"scrubber.clean: nesagent.CleanText":       "the scrubber itself, after the key is out",
	"scrubber.scrubErr: err.Error":             "the scrubber itself",
	"errorText: preview":                       "errorText's own fallback, returned to its callers, which clean it",
	"engine.ask: err.Error":                    "the format's error building the prompt: the user's text and the format's words, before any server answered",
}

// serverSource names e when it is an expression by which a server's words enter the package: a
// response's status line or headers, a body quoted (errorText, preview), a version string, an
// error's text, or text made fit to show (nesagent.CleanText) rather than cleaned of the key.
func serverSource(e ast.Node) (string, bool) {
	switch x := e.(type) {
	case *ast.CallExpr:
		switch fn := x.Fun.(type) {
		case *ast.Ident:
			if fn.Name == "errorText" || fn.Name == "preview" {
				return fn.Name, true
			}
		case *ast.SelectorExpr:
			if fn.Sel.Name == "Error" && len(x.Args) == 0 {
				return "err.Error", true
			}
			if id, ok := fn.X.(*ast.Ident); ok && id.Name == "nesagent" && fn.Sel.Name == "CleanText" {
				return "nesagent.CleanText", true
			}
		}
	case *ast.SelectorExpr:
		switch x.Sel.Name {
		case "Status", "Version":
			return x.Sel.Name, true
		case "Header":
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "resp" {
				return "resp.Header", true
			}
		}
	}
	return "", false
}

// scrubCall reports whether call cleans what it is given of the key.
func scrubCall(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	switch sel.Sel.Name {
	case "clean", "scrub", "scrubErr":
		return true
	}
	return false
}

// TestEveryServerStringIsScrubbed walks the package's source (tests aside) and finds every place
// that takes a server's words (serverSource) outside a call that cleans them of the key: each
// must be in serverStringSites, which says where it is cleaned; and every entry there must still
// be found.
func TestEveryServerStringIsScrubbed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string][]string{} // site -> where
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				fn = recvName(fd.Recv.List[0].Type) + "." + fn
			}
			var stack []ast.Node
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				what, ok := serverSource(n)
				if !ok {
					return true
				}
				for _, up := range stack[:len(stack)-1] {
					if call, ok := up.(*ast.CallExpr); ok && scrubCall(call) {
						return true // cleaned right here
					}
				}
				var b strings.Builder
				_ = printer.Fprint(&b, fset, n)
				site := fn + ": " + what
				found[site] = append(found[site], fset.Position(n.Pos()).String()+" "+b.String())
				return true
			})
		}
	}
	var missing []string
	for site, where := range found {
		if _, ok := serverStringSites[site]; !ok {
			missing = append(missing, site+"\n\t"+strings.Join(where, "\n\t"))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("a server's words taken outside scrubber.clean, and not in serverStringSites (clean them there, or say in the table where they are cleaned): %s", m)
	}
	var stale []string
	for site := range serverStringSites {
		if _, ok := found[site]; !ok {
			stale = append(stale, site)
		}
	}
	sort.Strings(stale)
	for _, s := range stale {
		t.Errorf("serverStringSites names %q, which the source no longer has: take it out", s)
	}
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	}
	return "?"
}
