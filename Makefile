# modelgate: two commands on a fresh machine — `make run` and `make test`.
# go.mod needs Go 1.27.3; a machine starts on its own Go (GOTOOLCHAIN=local), so the go
# command is told to fetch this toolchain from the module proxy (about 10 s, once).
export GOTOOLCHAIN ?= go1.27.3
GO       ?= go
DATA     ?= ./data
ADDR     ?= 127.0.0.1:8080
BIN      := bin

.PHONY: run cluster build test test-sdk test-e2e test-short test-faults test-cluster test-browser test-clients fuzz vet vulncheck fmt bench-go clean

## run: build and start the demo gateway (built-in upstream simulator, demo account and key)
run: build
	MODELGATE_DATA=$${MODELGATE_DATA:-$(DATA)} MODELGATE_ADDR=$${MODELGATE_ADDR:-$(ADDR)} $(BIN)/modelgate demo

## cluster: build and start a three-node cluster on loopback (certificates, init, the simulator
## as upstream, a demo account and key) under ./data-cluster; Ctrl-C stops all
cluster: build
	$(BIN)/modelgate cluster demo

## build: the gateway and the standalone simulator
build:
	$(GO) build -o $(BIN)/modelgate ./cmd/modelgate
	$(GO) build -o $(BIN)/modelgate-sim ./cmd/modelgate-sim

## test: gofmt check, vet and every test but the official SDKs' suites (make test-sdk) and the
## multi-process suites (make test-e2e), all under the race detector. Vet runs with -race so
## that it and the tests share one build of the module and its dependencies; the binaries the
## README test and the short kill test start are built as those tests were, with -race, so
## they only link what vet compiled.
## The SDK suites are left to make test-sdk because the three SDKs are 40% of a cold build (see
## docs/decisions.md, "Tests: what make test builds"); CI runs all three.
SDK_PKGS := ./transport/sdktest ./transport/replay
E2E_PKGS := ./e2e/clustertest ./bench/harness
TEST_PKGS = $$($(GO) list ./... | grep -v $(foreach p,$(SDK_PKGS) $(E2E_PKGS),-e '$(patsubst .%,%,$(p))$$'))
test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet -race $(TEST_PKGS)
	$(GO) build -race -o /dev/null ./cmd/...
	MODELGATE_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -race -count=1 -timeout 15m $(TEST_PKGS)

## test-sdk: the suites that drive the official SDKs (openai-go, anthropic-sdk-go, genai) and
## replay recorded provider traffic through them, under the race detector
test-sdk:
	$(GO) vet -race $(SDK_PKGS)
	$(GO) test -race -count=1 -timeout 15m $(SDK_PKGS)

## test-e2e: the suites that run whole gateways as processes: real three- and four-node
## clusters (e2e/clustertest: init, join, drain, kill -9, billing and limits across nodes) and
## the bench harness against the simulator, a plain proxy and the gateway, under the race
## detector (test-cluster runs the cluster's long fault suite)
test-e2e:
	$(GO) vet -race $(E2E_PKGS)
	$(GO) build ./cmd/...
	$(GO) test -race -count=1 -timeout 15m $(E2E_PKGS)

## test-faults: the fault tests (files tagged faults, tests named TestFault…): a disk that
## fills under load, the ledger's 20-kill crash test, flaky routes, a panic in each background
## loop (supervise.PanicAt); some need root (mounting
## a tmpfs) and skip without it. Only the packages that hold such tests are built: ./... would
## compile the SDK suites too, without race, which make test no longer shares (minutes, cold)
FAULT_PKGS = $$(grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=clients '^func TestFault' . | xargs -n1 dirname | sort -u)
test-faults:
	$(GO) test -tags faults -count=1 -timeout 30m -run '^TestFault' $(FAULT_PKGS)

## test-browser: the dashboard's tests in headless Chromium (Debian's chromium package, found
## on PATH; they skip without it unless MODELGATE_REQUIRE_BROWSER=1, which CI sets). Each
## page's screenshots go to SCREENSHOTS/<test name>/ (default ./test-output/screenshots)
SCREENSHOTS ?= $(CURDIR)/test-output/screenshots
test-browser:
	MODELGATE_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -count=1 -timeout 10m -v ./dashboard/...

## test-cluster: the long cluster fault suite on real three-node clusters (e2e/clustertest,
## files tagged faults, tests named TestClusterFault…, which test-faults' ^TestFault leaves
## out): kill -9 of leaders and followers under load, a rolling restart with drain, exact
## limits across nodes, a panic in every node's batcher and leader events, and the kills again
## with each node in a network namespace of its own (root; 1 ms, then 5 ms ± 1 ms with 1% loss
## between nodes); each checks every account's ledger on every node. About 6.5 minutes
test-cluster:
	$(GO) test -tags faults -count=1 -timeout 20m -v -run '^TestClusterFault' ./e2e/clustertest/

## fuzz: every fuzz target of the module for FUZZTIME each (default 15s), one after another
## (go test fuzzes one target at a time); the targets are listed with `go test -list` in each
## package that has a Fuzz function, so a new one is never left out. FUZZPARALLEL sets
## -parallel (default: Go's, a worker per core); FUZZFLAGS adds flags (-fuzzminimizetime 5s).
FUZZTIME     ?= 15s
FUZZPARALLEL ?=
fuzz:
	@targets=$$(for dir in $$(grep -rl --include='*_test.go' --exclude-dir=node_modules '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	    list=$$($(GO) test -list '^Fuzz' $$dir) || { echo "$$list" >&2; exit 1; }; \
	    for target in $$(echo "$$list" | grep '^Fuzz'); do echo "$$dir:$$target"; done; \
	  done) || exit 1; \
	echo "$$(echo $$targets | wc -w) fuzz targets, $(FUZZTIME) each:"; for t in $$targets; do echo "  $$t"; done; \
	failed=""; \
	for t in $$targets; do \
	  echo "== $$t"; \
	  $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $(if $(FUZZPARALLEL),-parallel $(FUZZPARALLEL)) $(FUZZFLAGS) $${t%%:*} || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: failing targets:$$failed"; exit 1; fi

vet:
	$(GO) vet -race ./...

## vulncheck: govulncheck over the module and the toolchain, against the Go vulnerability
## database as the module golang.org/x/vulndb holds it at VULNDB (turned into govulncheck's
## database by its own indexdb under VULNDB_DIR), so it runs where only the module proxy is
## reachable. With the internet, `go run golang.org/x/vuln/cmd/govulncheck@latest ./...`
## reads vuln.go.dev directly; here, raise VULNDB to a newer version to see new advisories.
VULNDB     ?= v0.0.0-20261105234957-e22db6528018
VULNDB_DIR ?= $(CURDIR)/.vulndb/$(VULNDB)
vulncheck:
	@test -f $(VULNDB_DIR)/index/db.json || { \
	  $(GO) mod download golang.org/x/vulndb@$(VULNDB) && \
	  $(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB) -out $(VULNDB_DIR) \
	    -vulns $$($(GO) env GOMODCACHE)/golang.org/x/vulndb@$(VULNDB)/data/osv; }
	$(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db file://$(VULNDB_DIR) ./...

## test-clients: the real coding CLIs pinned in clients/package.json (Claude Code, Codex, Gemini
## CLI, opencode, Qwen Code), each headless against the demo gateway on every demo chat model;
## prints the clients × models table. CLIENTS_ONLY=codex/sim-chat,qwen runs part of it.
test-clients: build clients/node_modules/.installed
	cd clients && $(GO) vet . && MODELGATE_BIN=$(CURDIR)/$(BIN)/modelgate $(GO) test -count=1 -timeout 30m -v -run TestRealClients .

# Install from the lock file, only when it changed since the last install. Not `npm ci`: the
# registry this project reaches lacks some other platforms' optional packages (opencode's and
# a clipboard addon's darwin/windows builds), so the lock cannot list them and npm ci refuses
# it; `npm install --no-save` installs exactly the locked tree and never rewrites the lock.
clients/node_modules/.installed: clients/package.json clients/package-lock.json
	cd clients && npm install --no-save --no-audit --no-fund --loglevel=error
	touch $@

fmt:
	gofmt -w $$(git ls-files '*.go')

## bench-go: the go test benchmarks (gateway vs direct simulator call, codecs)
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x ./bench/ ./codec/...

clean:
	rm -rf $(BIN)

## bench: the load-testing suite (about 6 minutes on 2 cores, the cluster scenario included): simulator, a plain reverse proxy
## and the gateway as separate processes, pinned (BENCH_PIN, default --pin: the servers on one set
## of CPUs, the load generator on the other, and CPU per request counted on the servers' whole
## cores as well as per process; BENCH_PIN= runs unpinned), every scenario interleaved and
## repeated; prints the side-by-side table and writes bench/results/<date>.json and .md.
## BENCH_FLAGS adds flags (e.g. --scenario chat-plain --reps 5); bin/modelgate-bench -h lists them.
BENCH_PIN ?= --pin
.PHONY: bench
bench: build
	$(GO) build -o $(BIN)/modelgate-bench ./cmd/modelgate-bench
	$(BIN)/modelgate-bench --out bench/results --gateway-bin $(BIN)/modelgate --sim-bin $(BIN)/modelgate-sim $(BENCH_PIN) $(BENCH_FLAGS)

## bench-peers: the gateway beside Bifrost, pinned: chat-plain and chat-stream on the targets
## proxy, gateway, bifrost-lean (no request log) and bifrost-logging (its SQLite request log),
## interleaved, with a fixed rate of 150 req/s (about 3 minutes). Bifrost is built once, on
## first use, from its build kit (PEERS/bifrost: build.sh, config.py) into BIFROST_DIR, which
## git ignores (about 5 minutes on 2 cores; needs a C compiler). BENCH_FLAGS adds flags.
PEERS ?= ../shared/peers
BIFROST_DIR ?= $(BIN)/peers/bifrost
BENCH_PEERS_FLAGS ?= --pin --scenario chat-plain,chat-stream --targets proxy,gateway,bifrost-lean,bifrost-logging --rate 150
.PHONY: bench-peers
bench-peers: build $(BIFROST_DIR)/bin/bifrost-http
	$(GO) build -o $(BIN)/modelgate-bench ./cmd/modelgate-bench
	$(BIN)/modelgate-bench --out bench/results --gateway-bin $(BIN)/modelgate --sim-bin $(BIN)/modelgate-sim \
	  --bifrost-bin $(BIFROST_DIR)/bin/bifrost-http --bifrost-config $(PEERS)/bifrost/config.py $(BENCH_PEERS_FLAGS) $(BENCH_FLAGS)

# Built with Go 1.26 (BIFROST_GOTOOLCHAIN), not the gateway's 1.27: Bifrost's JSON library
# (sonic 1.15) drops to its slower compatibility mode from Go 1.27 on. In a directory outside
# this module (the kit's first step downloads modules where it runs, and its sources would
# otherwise sit in this tree for every scan of it to read); only the binary is kept.
BIFROST_GOTOOLCHAIN ?= go1.26.8
$(BIFROST_DIR)/bin/bifrost-http:
	@test -f $(PEERS)/bifrost/build.sh || { echo "no Bifrost build kit at $(PEERS)/bifrost (set PEERS)"; exit 1; }
	dir=$$(mktemp -d) && cd $$dir && GOTOOLCHAIN=$(BIFROST_GOTOOLCHAIN) bash $(abspath $(PEERS))/bifrost/build.sh $$dir/kit && \
	  mkdir -p $(abspath $(BIFROST_DIR))/bin && cp $$dir/kit/bin/bifrost-http $(abspath $(BIFROST_DIR))/bin/; \
	  status=$$?; rm -rf $$dir; exit $$status

## bench-cluster: only the bench's cluster scenario (bench/README.md): charges through the quota
## service on one node and on three engine nodes with mutual TLS, in one process, and the kill
## trials; prints its table and writes bench/results/<date>.json and .md
.PHONY: bench-cluster
bench-cluster:
	$(GO) build -o $(BIN)/modelgate-bench ./cmd/modelgate-bench
	$(BIN)/modelgate-bench --out bench/results --scenario cluster $(BENCH_FLAGS)
