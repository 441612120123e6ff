package model

// DocumentClosed is told each document the client closes (nesagent.Forgetter), and again once a
// request for it that was in flight at the close has been answered: all the engine keeps for it
// goes. Its stream going on after an early answer is closed (the rest of that answer is lost),
// what was prefetched for it is cancelled, a generation in flight for it ends, and what its last
// suggestion makes (acceptChain) and its word index are dropped.
//
// History stays: the FIM ring (fimRing) keeps chunks of the files the user worked in, closed ones
// too, for the FIM prompts still want what the user just worked on, and it is bounded
// (Config.FIMChunks chunks of Config.FIMChunkLines lines, each a copy of its lines, not a slice
// of its file that would keep the whole text). Sweep's tracker (sweepTracker) knows suggestions by their
// ids, the last maxRefsTracked of them, not documents. The formats keep nothing of their own.
func (e *engine) DocumentClosed(uri string) {
	// The follows before and after the prefetch: a prefetch that starts once a stream has ended
	// finds that stream lost (startPrefetch's stale), and one whose own stream answers after the
	// prefetch is cancelled registers no follow (follows.begin).
	e.follows.closed(uri)
	e.prefetched.closed(uri)
	e.follows.closed(uri)
	e.gens.closed(uri)
	e.chain.forget(uri)
	e.words.forget(uri)
}
