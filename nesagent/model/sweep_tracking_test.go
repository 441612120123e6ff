package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// sweepService answers as Sweep's service: a suggestion that finishes "retur" as "return sum",
// and 200 to the metrics endpoint.
func sweepService(w http.ResponseWriter, r *http.Request, body []byte) {
	switch r.URL.Path {
	case sweepAPIPath:
		var req sweepAPIRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		at := strings.Index(req.FileContents, "retur")
		fmt.Fprintf(w, `{"autocomplete_id":"ac-42","start_index":%d,"end_index":%d,"completion":"return sum","confidence":0.9}`, at, at+len("retur"))
	case sweepMetricsPath:
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

// TestSweepTrackingIsOffUnlessTurnedOn: through the agent, accepting a sweep-api suggestion tells
// Sweep's metrics endpoint nothing by default; with SweepTracking it sends one event with the
// service's id for the suggestion, the lines it changed, and no code.
func TestSweepTrackingIsOffUnlessTurnedOn(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("tracking ", on), func(t *testing.T) {
			srv := newService(t, sweepService)
			eng, err := New(Config{URL: srv.URL, Model: "sweep", Format: "sweep-api", APIKey: testKey, SweepTracking: on})
			if err != nil {
				t.Fatal(err)
			}
			c := serveKit(t, eng)
			ctx := context.Background()
			const u = "file:///w/sum.go"
			text := "func sum(xs []int) (sum int) {\n\tretur\n}\n"
			if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: text}); err != nil {
				t.Fatal(err)
			}
			sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 1, Position: acp.UnstablePosition{Line: 1, Character: 6}, TriggerKind: "manual"})
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs) != 1 || sugs[0].Edit == nil || sugs[0].Edit.Edits[0].NewText != "n sum" {
				t.Fatalf("suggestions %+v, want \"retur\" finished", sugs)
			}
			if err := c.Accept(ctx, sugs[0].Edit.Id); err != nil {
				t.Fatal(err)
			}
			var metrics []recorded
			deadline := time.Now().Add(5 * time.Second)
			for {
				metrics = nil
				for _, r := range srv.posts() {
					if r.path == sweepMetricsPath {
						metrics = append(metrics, r)
					}
				}
				if len(metrics) > 0 || !on || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !on {
				// Another suggestion asked after the accept: its request is answered after
				// any event the accept could have sent.
				if _, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 1, Position: acp.UnstablePosition{Line: 1, Character: 6}, TriggerKind: "manual"}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(200 * time.Millisecond)
				for _, r := range srv.posts() {
					if r.path == sweepMetricsPath {
						t.Fatalf("an event reached Sweep's metrics endpoint with tracking off: %s", r.body)
					}
				}
				return
			}
			if len(metrics) != 1 {
				t.Fatalf("%d events, want 1", len(metrics))
			}
			var ev sweepEvent
			if err := json.Unmarshal(metrics[0].body, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.EventType != "autocomplete_suggestion_accepted" || ev.AutocompleteID != "ac-42" || ev.Additions != 1 || ev.Deletions != 1 {
				t.Errorf("event %+v", ev)
			}
			if strings.Contains(string(metrics[0].body), "sum") || strings.Contains(string(metrics[0].body), testKey) {
				t.Errorf("the event holds code or the key: %s", metrics[0].body)
			}
			if metrics[0].header.Get("Authorization") != "Bearer "+testKey {
				t.Error("the event was sent without the key")
			}
		})
	}
}
