package lspside

import (
	"context"
	"testing"
	"time"
)

// TestDocRequestsHoldNothingOnceDone: a document's state goes when the nes/suggest in flight is
// done, its position is forgotten on close and it is small enough again; a newer nes/suggest
// cancels the one before, which is a burst only within the coalescing wait.
func TestDocRequestsHoldNothingOnceDone(t *testing.T) {
	d := newDocRequests()
	ctx1, burst, done1 := d.beginSuggest(context.Background(), "a", time.Hour)
	if burst {
		t.Error("the first request is a burst")
	}
	ctx2, burst, done2 := d.beginSuggest(context.Background(), "a", time.Hour)
	if !burst || ctx1.Err() == nil {
		t.Errorf("the second request: burst %v, the first cancelled: %v", burst, ctx1.Err())
	}
	done1() // the older one ending leaves the newer registered
	if _, n, _ := d.held(); n != 1 || ctx2.Err() != nil {
		t.Errorf("in flight %d after the older ended, the newer: %v", n, ctx2.Err())
	}
	if _, burst, done3 := d.beginSuggest(context.Background(), "a", 0); burst {
		t.Error("a request after the coalescing wait is a burst")
	} else {
		done3()
	}
	done2()
	if d.focus("a", 7, 10) != 7 || d.focus("a", -1, 5) != 5 || d.at("b", 3) != true || d.at("a", 4) || d.lastCursor("a") != 4 {
		t.Error("positions are not recorded as the requests go")
	}
	if d.withhold("a") || !d.withhold("a") || !d.isWithheld("a") {
		t.Error("withhold does not say it was already")
	}
	d.release("a")
	d.closed("a")
	if c, n, active := d.held(); c != 0 || n != 0 || active || len(d.docs) != 0 {
		t.Errorf("after close: %d positions, %d in flight, active %v, %d documents", c, n, active, len(d.docs))
	}
}

// TestACancelledRequestSupersedesNothing: a request cancelled before it registers (the bridge's
// own, asked ahead, which the editor's request ended as it began) leaves the request in flight
// alone: the editor's request keeps its answer.
func TestACancelledRequestSupersedesNothing(t *testing.T) {
	d := newDocRequests()
	editors, _, done := d.beginSuggest(context.Background(), "a", time.Hour)
	defer done()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	ahead, burst, doneAhead := d.beginSuggest(ended, "a", time.Hour)
	doneAhead()
	if editors.Err() != nil || burst || ahead.Err() == nil {
		t.Errorf("the editor's request: %v; the cancelled one: %v, burst %v; want the editor's alive, the other ended", editors.Err(), ahead.Err(), burst)
	}
	if _, n, _ := d.held(); n != 1 {
		t.Errorf("%d requests in flight, want the editor's", n)
	}
}
