# acp-lsp-bridge. `make test` is what CI runs (through .ci/run, after installing the test peers).
GO ?= go
BIN := bin/acp-lsp-bridge
# The version stamped into release builds (make dist VERSION=v1.2.3). Without it: the nearest tag,
# or the commit, with -dirty when the tree has changes. Plain `go build` and `go install` read their
# version from the module and VCS information instead (internal/buildinfo).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

.PHONY: build test test-windows lint cross bench fuzz fuzz-short peers dist vsix

build:
	$(GO) build -o $(BIN) ./cmd/acp-lsp-bridge

# The interop tests talk to Neovim 0.12 and the official ACP SDK when NVIM and PEERS_NODE_MODULES
# are set (eval "$$(../shared/tools/install-test-peers.sh)"); without them they skip.
test: lint
	$(GO) test -race -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory fuzz-short
	bash tools/gate-rules-check.sh
	@if [ "$${ACP_LSP_BRIDGE_WINE:-}" = 1 ]; then sh tools/windows-tests.sh; fi

# The tests built for Windows, run under Wine 10 (tools/windows-tests.sh; the Wine root first:
# sh ../shared/tools/wine-tests.sh setup, as root). `make test` runs them with ACP_LSP_BRIDGE_WINE=1.
test-windows:
	sh tools/windows-tests.sh

lint: cross
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Every platform the bridge runs on: vet (tests included) and build, so that nothing that builds
# on Linux only slips in.
TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 freebsd/amd64
cross:
	@for t in $(TARGETS); do \
	  echo "vet and build for $$t"; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./... || exit 1; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) build -trimpath -o /dev/null ./cmd/acp-lsp-bridge || exit 1; \
	done

# Release archives in dist/: acp-lsp-bridge_<version>_<os>_<arch>.tar.gz (.zip for windows), each
# with the binary, README.md and LICENSE, and SHA256SUMS; the bare binaries stay in
# dist/bin/<os>_<arch>/. Built with -trimpath, CGO off and the version stamped: the same commit
# gives the same bytes (tools/dist checks it by building twice).
dist:
	$(GO) run ./tools/dist -version $(VERSION) -out dist

# Every benchmark, then the table of the performance budgets (README "Performance").
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -timeout=60m ./... | $(GO) run ./tools/benchtable

# The packages with fuzz targets. Each target's corpus is committed in testdata/fuzz/<Name>/ and
# runs, with the targets' seeds, as ordinary tests.
FUZZ_PKGS := ./acpside ./encoding ./document ./editorstate ./translate ./lspside ./nesagent ./nesagent/builtin ./nesagent/model ./workspace
# A budget in runs (Nx), not in seconds: with a time budget, Go 1.26's fuzz coordinator can report
# "context deadline exceeded" as a failure when the time runs out while a worker is busy (Go issue
# 75804, fixed in Go 1.27), which fails CI on a loaded machine with no failing input found. A count
# has no deadline to race. 50000 runs take 1 to 4 s per target here.
FUZZTIME ?= 50000x

# A longer run of every fuzz target, a million runs each (about 10 s to a minute per target).
fuzz:
	@$(MAKE) --no-print-directory fuzz-short FUZZTIME=1000000x

# A short run of every fuzz target, FUZZTIME runs each: `make test` (so CI) runs it after the tests.
# The targets are read from the sources: `go test -list` would build each test binary once more.
fuzz-short:
	@for pkg in $(FUZZ_PKGS); do \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$pkg/*_test.go); do \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# The VS Code extension, one package per platform with that platform's bridge inside, which the
# extension uses unless acpLspBridge.path is set: dist/vscode/acp-lsp-bridge-<target>-<version>.vsix
# for linux, darwin and win32, x64 and arm64. It packages the binaries `make dist` leaves in
# dist/bin, building any that is missing (or all, when they are of another version), and needs
# node, npm and @vscode/vsce (tools/vsix.sh says where it looks for each).
vsix:
	GO=$(GO) sh tools/vsix.sh -version $(VERSION) -bin dist/bin -out dist/vscode
