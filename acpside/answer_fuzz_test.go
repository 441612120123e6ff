package acpside

import (
	"reflect"
	"testing"
)

// answerSeeds are answers to nes/suggest of every shape the one-pass read takes or hands on.
var answerSeeds = []string{
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"edit","id":"a","uri":"file:///w/a.go","edits":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":2}},"newText":"x"}],"cursorPosition":{"line":1,"character":3}}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"jump","id":"j","uri":"file:///w/a.go","position":{"line":4,"character":0}},{"kind":"rename","id":"r","uri":"file:///w/a.go","position":{"line":1,"character":1},"newName":"total"},{"kind":"searchAndReplace","id":"s","uri":"file:///w/a.go","search":"a+","replace":"b","isRegex":true}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"edit","suggestionId":"v2","uri":"file:///a","edits":[]}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"edit","id":"d","uri":"file:///a","edits":[]},{"kind":"jump","id":"d","uri":"file:///a","position":{"line":0,"character":0}}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"edit","id":"a","uri":"file:///a","edits":[],"position":"not a position"}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"teleport","id":"t"},{"kind":"edit","id":7,"uri":"file:///a","edits":[]},{"kind":5,"id":"k"}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"KIND":"edit","Id":"c","URI":"file:///a","edits":[],"id":"c2"}]}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"nes-1\",\"result\":{\"suggestions\":[{\"kind\":\"edit\",\"id\":\"u\",\"uri\":\"file:///a\",\"edits\":[{\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":0}},\"newText\":\"\xff\"}]}]}}",
	`{"jsonrpc":"2.0","id":"nes-1","error":{"code":-32603,"message":"boom"}}`,
	`{"jsonrpc":"2.0","id":"nes-1"}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":{"suggestions":[{"kind":"edit","id":"","uri":"file:///a","edits":null}]}}`,
	`{"jsonrpc":"2.0","id":"nes-1","result":null}`,
	`not json`,
}

// FuzzAnswerDecoding: the one-pass read of an answer (decodeAnswerAtOnce), where it takes one,
// finds what the careful path finds.
func FuzzAnswerDecoding(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := decodeAnswerAtOnce(line)
		if !ok {
			return
		}
		careful, err := decodeAnswerCarefully(line)
		if err != nil {
			t.Fatalf("the one pass read %s, the careful path failed: %v", line, err)
		}
		if !reflect.DeepEqual(fast, careful) {
			t.Fatalf("%s\none pass: %+v\ncareful:  %+v", line, fast, careful)
		}
	})
}

// TestMostAnswersAreReadInOnePass: the answers agents send every time take the one pass; the odd
// ones take the careful path (and say why).
func TestMostAnswersAreReadInOnePass(t *testing.T) {
	for i, s := range answerSeeds {
		_, ok := decodeAnswerAtOnce([]byte(s))
		want := i <= 4 || i == 7
		if ok != want {
			t.Errorf("seed %d: read in one pass %v, want %v: %s", i, ok, want, s)
		}
	}
}
