package lspside

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// TestInlineResultIsWhatTheProtocolPackageWrites: the hand-written inline completion result is,
// byte for byte, what go.lsp.dev/protocol writes for the same items, and items it does not write
// by hand go to the protocol package.
func TestInlineResultIsWhatTheProtocolPackageWrites(t *testing.T) {
	rng := func(l1, c1, l2, c2 uint32) *protocol.Range {
		return &protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
	}
	accept := protocol.Command{Title: "Accept next edit", Command: CommandAccept, Arguments: []protocol.LSPAny{jsontext.Value(`"sug-1"`)}}
	filter := "fi"
	cases := map[string][]protocol.InlineCompletionItem{
		"none": {},
		"one":  {{InsertText: protocol.String("return total\n"), Range: rng(1000, 8, 1000, 8), Command: accept}},
		"two, text to escape": {
			{InsertText: protocol.String("a \"quoted\" \\ <tag> & \t é 中 \u2028 😀"), Range: rng(0, 0, 0, 3), Command: accept},
			{InsertText: protocol.String(""), Range: rng(4294967295, 1, 2, 3)},
		},
		"no range, no command":             {{InsertText: protocol.String("x")}},
		"several arguments":                {{InsertText: protocol.String("x"), Command: protocol.Command{Title: "t", Command: "c", Arguments: []protocol.LSPAny{jsontext.Value(`1`), jsontext.Value(`{"a":[true,null]}`)}}}},
		"arguments not compact (protocol)": {{InsertText: protocol.String("x"), Command: protocol.Command{Title: "t", Command: "c", Arguments: []protocol.LSPAny{jsontext.Value(`{ "a" : [ 1 ] }`)}}}},
		"a snippet (protocol)":             {{InsertText: &protocol.StringValue{Kind: "snippet", Value: "${1:x}"}, Range: rng(0, 0, 0, 0)}},
		"filter text (protocol)":           {{InsertText: protocol.String("x"), FilterText: &filter}},
	}
	for name, items := range cases {
		got, err := inlineResult(items)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := protocol.Marshal(protocol.InlineCompletionList{Items: items})
		if err != nil {
			t.Fatal(err)
		}
		if g := []byte(got.(jsonrpc2.RawMessage)); !bytes.Equal(g, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, g, want)
		}
	}
}

var positionParamsSeeds = []string{
	`{"textDocument":{"uri":"file:///w/a.go"},"position":{"line":1000,"character":8},"context":{"triggerKind":1}}`,
	`{"textDocument":{"uri":"file:///w/a.go","version":7},"position":{"line":0,"character":0},"context":{"triggerKind":2,"selectedCompletionInfo":{"range":{},"text":"x"}}}`,
	`{"TextDocument":{"URI":"file:///é"},"Position":{"Line":1,"Character":2},"context":null,"workDoneToken":"t"}`,
	`{"textDocument":{"uri":"a","uri":"b"},"position":{"line":1,"line":2}}`,
	`{"textDocument":{"uri":5},"position":{"line":1,"character":2}}`,
	`{"textDocument":{"uri":"a"},"position":{"line":1.5,"character":2}}`,
	`{"textDocument":{"uri":"a"},"position":{"line":1e2,"character":-0}}`,
	`{"textDocument":{"uri":"a"},"position":{"line":99999999999999999999,"character":2}}`,
	"{\"textDocument\":{\"uri\":\"a\xff\"},\"position\":{\"line\":1,\"character\":2}}",
	`{"textDocument":{"uri":"a"},"position":null,"context":5}`,
	`null`,
	`[]`,
	`{"textDocument":{"uri":"a"}} {}`,
	`{"text_document":{"URI":"a"},"POSITION":{"li-ne":3,"character":1}}`,
	`{"textDocument":{"uri":"a","version":2},"textDocument":null,"position":{"line":3},"position":null}`,
	`{"textDocument":{"uri":"a","uri":null},"position":{"line":3,"line":null},"context":{"triggerKind":1},"context":{"triggerKind":null}}`,
	`{"textDocumentx":{"uri":"a"},"positio":{"line":3},"K":1}`,
	`{"textDocument":{"uri":"a"},"po\u017fition":{"line":3},"context":{"trigger\u212aind":1}}`,
	`{"textDocument":{"uri":"a"},"textdocument":{"version":3},"position":{"line":3},"Position":{"character":4}}`,
}

// FuzzPositionParams: the hand-written reading of a position request's params, where it takes
// them, finds what the generic decoder finds.
func FuzzPositionParams(f *testing.F) {
	for _, s := range positionParamsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fast, ok := decodePositionParams(raw)
		if !ok {
			return
		}
		var want positionParams
		if err := jsonv2.Unmarshal(raw, &want, acpside.LenientJSON); err != nil {
			t.Fatalf("read by hand, but the decoder fails on %s: %v", raw, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%s\nby hand: %+v\ndecoder: %+v", raw, fast, want)
		}
	})
}

// TestPositionParamsReadByHand: the params editors send are read by hand; the odd ones, and ones
// too large for a decoder kept between requests, go to the decoder.
func TestPositionParamsReadByHand(t *testing.T) {
	large := `{"textDocument":{"uri":"file:///a"},"position":{"line":1,"character":2},"pad":"` + strings.Repeat("x", maxHandParams) + `"}`
	if _, ok := decodePositionParams([]byte(large)); ok {
		t.Errorf("params of %d bytes were read by hand, over the %d bytes bound", len(large), maxHandParams)
	}
	for i, s := range positionParamsSeeds {
		_, ok := decodePositionParams([]byte(s))
		if want := i <= 3 || i == 10 || (i >= 13 && i <= 16) || i == 18; ok != want {
			t.Errorf("seed %d: read by hand %v, want %v: %s", i, ok, want, s)
		}
	}
}
