# acp-lsp-bridge. `make test` is what CI runs (through .ci/run, after installing the test peers).
GO ?= go
BIN := bin/acp-lsp-bridge

.PHONY: build test lint bench fuzz fuzz-short peers

build:
	$(GO) build -o $(BIN) ./cmd/acp-lsp-bridge

# The interop tests talk to Neovim 0.12 and the official ACP SDK when NVIM and PEERS_NODE_MODULES
# are set (eval "$$(../shared/tools/install-test-peers.sh)"); without them they skip.
test: lint
	$(GO) test -race -count=1 ./...
	@$(MAKE) --no-print-directory fuzz-short

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Every benchmark, then the table of the performance budgets (README "Performance").
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -timeout=60m ./... | $(GO) run ./internal/benchtable

# The packages with fuzz targets. Each target's corpus is committed in testdata/fuzz/<Name>/ and
# runs, with the targets' seeds, as ordinary tests.
FUZZ_PKGS := ./encoding ./document ./editorstate ./translate ./lspside ./nesagent/builtin
FUZZTIME ?= 3s

# A longer run of every fuzz target, 20 s each.
fuzz:
	@$(MAKE) --no-print-directory fuzz-short FUZZTIME=20s

# A short run of every fuzz target, FUZZTIME each: `make test` (so CI) runs it after the tests.
# The targets are read from the sources: `go test -list` would build each test binary once more.
fuzz-short:
	@for pkg in $(FUZZ_PKGS); do \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$pkg/*_test.go); do \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done
