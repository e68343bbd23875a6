# Build, test and run evictionrequest-apiserver. Everything the targets need
# is built from the Go module proxy into _output/ (git-ignored).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c
.DEFAULT_GOAL := build

GO      ?= go
BIN_DIR := $(CURDIR)/_output/bin

# Every build but the race detector's uses the image's flags, static
# (CGO_ENABLED=0) and with reproducible paths (-trimpath), so that the Go
# build cache compiles each package once for the binaries, the image, the
# release, golangci-lint's package loading and the unit tests. The race
# detector needs cgo: make test-unit turns it back on for those tests.
# GO_GCFLAGS compile every package without DWARF: the image, the release,
# the tools and the test binaries are all linked without it (-w), and a
# cold compile takes a tenth less CPU (measured on 2 cores: 273 against 303
# CPU seconds for the controllers and the SDK with their dependencies).
# To debug a binary of make build with dlv: make build GO_GCFLAGS=.
export CGO_ENABLED ?= 0
GO_GCFLAGS ?= all=-dwarf=false
# A sub-make inherits GOFLAGS: it adds these once, after the caller's own.
OUR_GOFLAGS := -trimpath $(if $(GO_GCFLAGS),-gcflags=$(GO_GCFLAGS))
export GOFLAGS := $(strip $(filter-out $(OUR_GOFLAGS),$(GOFLAGS)) $(OUR_GOFLAGS))

# The Kubernetes release the local control plane runs, pinned by
# hack/tools/kubernetes/go.mod.
KUBE_VERSION := $(shell cd hack/tools/kubernetes && $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION:v%=%))) \
	-X k8s.io/client-go/pkg/version.gitVersion=$(KUBE_VERSION)

# DBUS_DAEMON is Debian's dbus-daemon: the private system bus of each real
# node, on which its kubelet learns of a graceful shutdown.
DBUS_DAEMON := /usr/bin/dbus-daemon

# kubelet-node is the upstream kubelet's code on a CRI runtime without
# containers (hack/tools/kubernetes/kubelet-node): the local control plane's
# real nodes. It builds in the same go build as the other Kubernetes
# binaries, which share most of its packages.
KUBE_BINS    := $(BIN_DIR)/kube-apiserver $(BIN_DIR)/kube-controller-manager $(BIN_DIR)/kube-scheduler $(BIN_DIR)/kubectl $(BIN_DIR)/kubelet-node
CLUSTER_BINS := $(BIN_DIR)/etcd $(KUBE_BINS) $(BIN_DIR)/kwok $(DBUS_DAEMON)

# TEST_LDFLAGS link every test binary without DWARF: nothing debugs them,
# a panic's stack comes from the symbol table, and each of the many test
# binaries links about a quarter faster.
TEST_LDFLAGS := -w

# TEST_GOGC and TEST_GOMEMLIMIT are the Go runtime's settings of make
# test's compiles, links and linters: a garbage collector that runs half as
# often, under a soft limit of memory per process. Each compile is a new
# process, and every page its heap grows into is a fresh page the kernel
# zeroes: on the machine's slow hours (memory shared with its neighbours)
# that zeroing took a sixth of the CPU, and a cold build of client-go took
# 326 CPU seconds on average with GOGC=200 against 349 with the default 100
# and 381 with 400, which a fast hour had favoured (three rounds of each,
# in turn). The budget binds on slow hours. The components the harness
# starts do not inherit these (internal/localcluster): they run with the
# runtime's defaults, as a user runs them.
TEST_GOGC       ?= 200
TEST_GOMEMLIMIT ?= 3GiB

# E2E_TIMEOUT bounds the e2e suite; E2E_RUN selects tests by regexp;
# E2E_PARALLEL is how many of a suite's tests run at once. They mostly wait
# on the control plane, so more than go test's default (one per core) keeps
# two cores busy.
E2E_TIMEOUT  ?= 45m
E2E_RUN      ?= .
E2E_PARALLEL ?= 4

# VERSION is what the binaries of the project report with --version.
VERSION ?= v0.1.0-$(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/evictionrequest/apiserver/pkg/version.version=$(VERSION)

# TIMED runs a recipe's command as a phase of make test (hack/timed.sh):
# make test prints every phase's time at its end (hack/phases.sh), and
# keeps them in PHASES_FILE.
TIMED       := $(CURDIR)/hack/timed.sh
PHASES_FILE := $(CURDIR)/_output/phases.tsv

.PHONY: build
build: ## Build evictionrequest-apiserver, evictionrequest-controller, the kubectl plugin, the surge interceptor and the test programs into _output/bin.
	$(TIMED) "build: the project's binaries" $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN_DIR)/ \
		./cmd/evictionrequest-apiserver ./cmd/evictionrequest-controller ./cmd/kubectl-evictionrequest ./cmd/surge-interceptor
	$(TIMED) "build: the harness and the sample interceptor" $(GO) build -o $(BIN_DIR)/ ./hack/local-up ./hack/node-host ./examples/sample-interceptor

# UPSTREAM_CONTROLLERS is Kubernetes 1.38's evictionrequest-controller and
# imperative-eviction-responder-controller, as kube-controller-manager runs
# them (hack/tools/kubernetes-1.38): the lifecycle.k8s.io control plane runs
# them in place of ours with LIFECYCLE_CONTROLLERS=upstream. Go 1.27, which
# the go command fetches from the module proxy.
# Defined before tools, whose prerequisites make expands as it reads them.
UPSTREAM_CONTROLLERS := $(BIN_DIR)/eviction-controllers

# KARPENTER_BIN is Karpenter's KWOK provider (hack/tools/karpenter), the node
# autoscaler of make run KARPENTER=true and of the e2e suites, with the
# CRDs of its module beside it (karpenter-crds/), which the harness
# installs. Its release needs Go 1.26.9: it builds with the Go 1.27 of
# UPSTREAM_CONTROLLERS.
KARPENTER_BIN     := $(BIN_DIR)/karpenter
KARPENTER_VERSION  = $(shell cd hack/tools/karpenter && GOTOOLCHAIN=go1.27.3 $(GO) list -m -f '{{.Version}}' sigs.k8s.io/karpenter)

.PHONY: tools
tools: $(CLUSTER_BINS) $(UPSTREAM_CONTROLLERS) $(KARPENTER_BIN) ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, the kubelet (kubelet-node), kwok, Kubernetes 1.38's eviction request controllers and Karpenter's KWOK provider, and install Debian's dbus-daemon (only when missing or re-pinned).

$(BIN_DIR)/etcd: hack/tools/etcd/go.mod hack/tools/etcd/go.sum
	@echo ">> Building etcd from the Go module proxy (seconds once the project is built: it shares most of its packages)"
	cd hack/tools/etcd && $(TIMED) "tools: etcd" $(GO) build -o $@ go.etcd.io/etcd/server/v3
	@touch $@

$(KUBE_BINS) &: hack/tools/kubernetes/go.mod hack/tools/kubernetes/go.sum $(wildcard hack/tools/kubernetes/kubelet-node/*.go hack/tools/kubernetes/kubelet-node/*/*.go)
	@echo ">> Building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and the kubelet (kubelet-node) $(KUBE_VERSION) from the Go module proxy"
	@echo ">> The first build takes about ten minutes on 2 cores; later ones reuse the Go build cache"
	cd hack/tools/kubernetes && $(TIMED) "tools: Kubernetes and the kubelet" $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $(BIN_DIR)/ \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl \
		./kubelet-node
	@touch $(KUBE_BINS)

$(DBUS_DAEMON):
	hack/install-debian-packages.sh dbus-daemon

$(UPSTREAM_CONTROLLERS): hack/tools/kubernetes-1.38/go.mod hack/tools/kubernetes-1.38/go.sum hack/tools/kubernetes-1.38/eviction-controllers/main.go
	@echo ">> Building Kubernetes v1.38.0-beta.0's eviction request controllers with Go 1.27 (about two minutes on 2 cores)"
	cd hack/tools/kubernetes-1.38 && GOTOOLCHAIN=go1.27.3 $(TIMED) "tools: Kubernetes 1.38's controllers" $(GO) build -ldflags "-s -w" -o $@ ./eviction-controllers
	@touch $@

# HELM_BINS are helm, which the chart's tests and make verify run, and
# cyclonedx-gomod, which writes the release's software bills of materials.
HELM_VERSION := $(shell cd hack/tools/helm && $(GO) list -m -f '{{.Version}}' helm.sh/helm/v4)
HELM_BINS    := $(BIN_DIR)/helm $(BIN_DIR)/cyclonedx-gomod

.PHONY: helm
helm: $(HELM_BINS) ## Build helm and cyclonedx-gomod into _output/bin (only when missing or re-pinned).

$(HELM_BINS) &: hack/tools/helm/go.mod hack/tools/helm/go.sum
	@echo ">> Building helm $(HELM_VERSION) and cyclonedx-gomod from the Go module proxy"
	cd hack/tools/helm && $(TIMED) "tools: helm and cyclonedx-gomod" $(GO) build -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$(HELM_VERSION)" -o $(BIN_DIR)/ \
		helm.sh/helm/v4/cmd/helm github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod
	@touch $(HELM_BINS)

$(KARPENTER_BIN): hack/tools/karpenter/go.mod hack/tools/karpenter/go.sum
	@echo ">> Building Karpenter $(KARPENTER_VERSION)'s KWOK provider with Go 1.27 (about six minutes on 2 cores when nothing is cached)"
	cd hack/tools/karpenter && GOTOOLCHAIN=go1.27.3 $(TIMED) "tools: Karpenter" $(GO) build -ldflags "-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=$(KARPENTER_VERSION)" \
		-o $@ sigs.k8s.io/karpenter/kwok
	rm -rf $(BIN_DIR)/karpenter-crds && mkdir -p $(BIN_DIR)/karpenter-crds
	module=$$(cd hack/tools/karpenter && GOTOOLCHAIN=go1.27.3 $(GO) list -m -f '{{.Dir}}' sigs.k8s.io/karpenter) && \
		install -m 0644 $$module/kwok/charts/crds/*.yaml $$module/kwok/apis/crds/*.yaml $(BIN_DIR)/karpenter-crds/
	@touch $@

$(BIN_DIR)/kwok: hack/tools/kwok/go.mod hack/tools/kwok/go.sum
	@echo ">> Building kwok from the Go module proxy (seconds once the project is built: it shares most of its packages)"
	cd hack/tools/kwok && $(TIMED) "tools: kwok" $(GO) build -o $@ sigs.k8s.io/kwok/cmd/kwok
	@touch $@

# API is the EvictionRequest API make run serves: coordination (ours, through
# evictionrequest-apiserver) or lifecycle (Kubernetes' own, with
# evictionrequest-controller). OVERLAY is the overlay of artifacts/ it
# deploys, by default the API's with the eviction API bridge (bridge,
# lifecycle-bridge): for coordination also default (no bridge) or ha (two
# server replicas behind the APIService, on a three-member etcd); for
# lifecycle, lifecycle.
API     ?= coordination
OVERLAY ?=
# LIFECYCLE_CONTROLLERS runs, with API=lifecycle, our controllers (ours) or
# Kubernetes 1.38's (upstream), with ours for the actors only.
LIFECYCLE_CONTROLLERS ?= ours
# KARPENTER=true runs Karpenter's KWOK provider too, with a NodePool
# "default" whose evictions go through the eviction API bridge
# (docs/karpenter.md).
KARPENTER ?= false

.PHONY: run
run: build tools ## Run the local control plane in the foreground: our API with evictionrequest-apiserver registered (OVERLAY=ha for two replicas on a three-member etcd), or API=lifecycle for Kubernetes' lifecycle.k8s.io API with evictionrequest-controller; KARPENTER=true runs Karpenter too (docs/karpenter.md).
	$(BIN_DIR)/local-up --dir=_output/local --bin-dir=$(BIN_DIR) --api=$(API) --overlay=$(OVERLAY) --lifecycle-controllers=$(LIFECYCLE_CONTROLLERS) \
		--karpenter=$(KARPENTER)

.PHONY: test
test: ## Everything CI runs: verify, unit and storage tests, the image, the release, e2e, a short fault campaign; then the time of each phase (also in _output/phases.tsv).
	@mkdir -p _output && rm -rf $(PHASES_FILE) $(PHASES_FILE:.tsv=-logs)
	@start=$$(date +%s); status=0; \
		GOGC=$(TEST_GOGC) GOMEMLIMIT=$(TEST_GOMEMLIMIT) PHASES=$(PHASES_FILE) $(MAKE) --no-print-directory test-phases || status=$$?; \
		hack/phases.sh $(PHASES_FILE) $$(($$(date +%s) - start)); exit $$status

.PHONY: test-phases
test-phases: BESIDE_E2E := verify-lint-beside
test-phases: checks-and-tools test-e2e-and-faults

# make test's first stage runs two lanes side by side: the checks, the unit
# tests, the image and the release in turn (CHECKS_AND_UNITS), and the
# builds of the tools the e2e stage needs (TOOLS_BESIDE) at the lowest CPU
# priority. The checks and the tests leave part of a core idle (measured
# cold: 1.6 to 1.8 of 2 cores, hack/phases.sh's cores column): the builds
# take those cycles and the tests keep theirs, and their timing. Karpenter
# and Kubernetes 1.38's controllers build first: with Go 1.27 they share
# no package with the tests, which compile the Kubernetes 1.37 libraries
# its build reuses.
# Each lane runs its targets in turn (IN_TURN); --output-sync=line keeps
# each line of the two whole.
CHECKS_AND_UNITS := verify-but-lint test-unit test-image test-release
TOOLS_BESIDE     := $(KARPENTER_BIN) $(UPSTREAM_CONTROLLERS) $(BIN_DIR)/etcd $(BIN_DIR)/kwok $(KUBE_BINS)

.PHONY: checks-and-tools checks-and-units tools-beside
checks-and-tools:
	$(TIMED) "checks and unit tests, the tools built beside them" $(MAKE) --no-print-directory -j2 --output-sync=line checks-and-units tools-beside
checks-and-units:
	$(MAKE) --no-print-directory IN_TURN=true $(CHECKS_AND_UNITS)
tools-beside:
	nice -n 19 $(MAKE) --no-print-directory IN_TURN=true $(TOOLS_BESIDE)

# IN_TURN=true runs a make's targets one after the other, whatever jobs
# its parent make has: a sub-make's own -j1 would warn that it leaves the
# jobserver.
ifeq ($(IN_TURN),true)
.NOTPARALLEL:
endif

# UNIT_PACKAGES are the packages of make test-unit; RACE_PACKAGES, those of
# them with concurrency of their own (controllers, the runner, the SDK, the
# drain, the surge, the plugin, the harness), run with the race detector.
# The server's assembly (registry, admission, k8s.io/apiserver and the
# embedded etcd) and the other commands' flag tests run without it: they
# import k8s.io/apiserver, grpc and cel-go, about 460 packages that the race
# detector would compile a second time (a cold CI run: minutes) for tests
# that start no goroutines of their own.
UNIT_PACKAGES := ./pkg/... ./cmd/... ./artifacts/... ./test/integration/... ./test/cmd/... ./test/chart/... ./internal/... ./hack/node-host/... ./test/scripts/...
RACE_PACKAGES := ./pkg/controller/... ./pkg/controllermanager/... ./pkg/sdk/... ./pkg/drain/... ./pkg/surge/... ./pkg/util/... \
	./pkg/bridge/... ./cmd/kubectl-evictionrequest/... ./internal/localcluster/...

.PHONY: test-unit
# go vet runs in make verify, as golangci-lint's govet over the same
# packages and their tests: go test's own vet pass (-vet=off) would analyse
# every dependency a second time.
test-unit: $(BIN_DIR)/promtool $(DBUS_DAEMON) $(HELM_BINS) ## Unit tests (the race detector on RACE_PACKAGES), storage tests on an embedded etcd, the logind stand-in on a real dbus-daemon, the kubelet nodes' kubelet-node (its configuration, its events in a user namespace) and CRI runtime, every value of the chart rendered (test/chart), make manifests, the server in-process (test/integration), the rendering of the deploy overlays, the alerting rules (promtool) and the harness's load balancer.
	CGO_ENABLED=1 $(TIMED) "unit: with the race detector" $(GO) test -race -vet=off -count=1 -ldflags=$(TEST_LDFLAGS) $(RACE_PACKAGES)
	$(TIMED) "unit: the others, storage, integration, chart" $(GO) test -vet=off -count=1 -ldflags=$(TEST_LDFLAGS) $$(comm -23 <($(GO) list $(UNIT_PACKAGES) | sort) <($(GO) list $(RACE_PACKAGES) | sort))
	cd hack/tools/kubernetes && $(TIMED) "unit: kubelet-node" $(GO) test -vet=off -count=1 -ldflags=$(TEST_LDFLAGS) ./kubelet-node/...

# The e2e runs and the short fault campaign mostly wait on their control
# planes, so make test runs them side by side (E2E_JOBS at once, and
# E2E_PACKAGES of the suites' packages at once), each on a control plane
# of its own, in a directory of its own under _output, on free loopback
# ports. --output-sync prints each one's output whole once it ends.
E2E_JOBS     ?= 4
E2E_PACKAGES ?= 2
# BESIDE_E2E are more targets for test-e2e-and-faults to run beside its
# runs; make test's golangci-lint (verify-lint-beside).
BESIDE_E2E   ?=
SIDE_BY_SIDE  = $(MAKE) --no-print-directory -j$(E2E_JOBS) --output-sync=target

.PHONY: test-e2e
test-e2e: build tools $(HELM_BINS) ## The e2e suites on the local control plane, through the kube-apiserver aggregator; the lifecycle.k8s.io suite twice, side by side: with our controllers and with Kubernetes 1.38's (ours for the actors only).
	$(TIMED) "e2e, side by side" $(SIDE_BY_SIDE) e2e-suites e2e-upstream

.PHONY: test-e2e-and-faults
test-e2e-and-faults: build tools $(HELM_BINS) ## The e2e suites and the short fault campaign side by side (make test's last phase).
	$(TIMED) "e2e and the fault campaign, side by side" $(SIDE_BY_SIDE) e2e-suites e2e-upstream faults-campaign $(BESIDE_E2E)

# e2e-suites, e2e-upstream and faults-campaign are the parts of the phases
# above, which build what they need first.
.PHONY: e2e-suites e2e-upstream
e2e-suites:
	$(TIMED) "e2e: the suites" $(GO) test -vet=off -ldflags=$(TEST_LDFLAGS) -p $(E2E_PACKAGES) -parallel=$(E2E_PARALLEL) -count=1 -timeout=$(E2E_TIMEOUT) -run='$(E2E_RUN)' ./test/e2e/... -args -bin-dir=$(BIN_DIR)
e2e-upstream:
	$(TIMED) "e2e: lifecycle.k8s.io on Kubernetes 1.38's controllers" $(GO) test -vet=off -ldflags=$(TEST_LDFLAGS) -p 1 -parallel=$(E2E_PARALLEL) -count=1 -timeout=$(E2E_TIMEOUT) -run='$(E2E_RUN)' ./test/e2e/lifecycle/ -args -bin-dir=$(BIN_DIR) -lifecycle-controllers=upstream

.PHONY: test-long
test-long: build tools ## Tests too long for make test (more than 20 minutes each): a lifecycle.k8s.io responder that never heartbeats is interrupted after kube-apiserver's 20-minute deadline and the next one takes over, end to end.
	$(GO) test -tags long -p 1 -count=1 -timeout=45m -run='^TestLong' ./test/e2e/lifecycle/ -args -bin-dir=$(BIN_DIR) -cluster-dir=$(CURDIR)/_output/e2e-long

# FUZZ_TIME is how long make fuzz fuzzes each target. Minimizing an
# interesting input is bounded: with the server's libraries instrumented each
# minimizing run is slow, and the default minute leaves no time to fuzz.
FUZZ_TIME ?= 1m
FUZZ_TARGETS := FuzzCreate FuzzUpdate FuzzStatusUpdate FuzzPodInterceptorsAnnotation

.PHONY: fuzz
fuzz: ## Fuzz decoding and validation, and the pod interceptor annotation, FUZZ_TIME each (seed corpora run in make test-unit).
	@for target in $(FUZZ_TARGETS); do \
		echo ">> $$target for $(FUZZ_TIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZ_TIME) -fuzzminimizetime 5s ./pkg/apis/coordination/validation/ || exit 1; \
	done

.PHONY: bench
bench: bench-micro bench-drain bench-system ## The micro-benchmarks, the drain benchmark and the system benchmark.

.PHONY: bench-micro
bench-micro: ## Go benchmarks of the working tree against BASE (default HEAD), as benchstat ratios.
	hack/bench.sh

# BENCH_DRAIN_PODS and BENCH_DRAIN_ROUNDS size the drain benchmark.
BENCH_DRAIN_PODS   ?= 500
BENCH_DRAIN_ROUNDS ?= 3

.PHONY: bench-drain
bench-drain: build tools ## Drain of BENCH_DRAIN_PODS pods: kubectl evictionrequest drain against kubectl drain and against the same pods evicted directly at the plugin's rate (the control plane's limit), side by side, on our API and on lifecycle.k8s.io (with the controller's heap per Eviction), and on lifecycle.k8s.io with Kubernetes 1.38's controllers at 300 requests/s (each controller's CPU, kube-apiserver's writes per pod); and the eviction API bridge: kubectl drain opted in against not, its webhook latency, kubectl drain through it against the plugin; a pool of 10 nodes of 50 pods drained 3 at a time (--max-concurrent-nodes) against kubectl drain of each node in turn.
	$(GO) build -o $(BIN_DIR)/evict-node ./test/cmd/evict-node
	$(GO) run ./test/cmd/bench-drain --dir=_output/bench-drain --bin-dir=$(BIN_DIR) --out=_output/bench/drain.json \
		--pods=$(BENCH_DRAIN_PODS) --rounds=$(BENCH_DRAIN_ROUNDS)
	$(GO) run ./test/cmd/bench-drain --api=lifecycle --dir=_output/bench-drain-lifecycle --bin-dir=$(BIN_DIR) \
		--out=_output/bench/drain-lifecycle.json --pods=$(BENCH_DRAIN_PODS) --rounds=$(BENCH_DRAIN_ROUNDS)
	$(GO) run ./test/cmd/bench-drain --api=lifecycle --lifecycle-controllers=upstream --upstream-arg=--kube-api-qps=300 --upstream-arg=--kube-api-burst=600 \
		--baseline=false --pool-nodes=0 --dir=_output/bench-drain-upstream --bin-dir=$(BIN_DIR) \
		--out=_output/bench/drain-upstream.json --pods=$(BENCH_DRAIN_PODS) --rounds=$(BENCH_DRAIN_ROUNDS)

# BENCH_SYSTEM_FLAGS sizes the system benchmark, for example
# BENCH_SYSTEM_FLAGS="--rounds=1 --ops=500 --objects=2000 --clients=16".
BENCH_SYSTEM_FLAGS ?=

# BENCH_KARPENTER_FLAGS sizes the Karpenter benchmark, for example
# BENCH_KARPENTER_FLAGS="--nodes=8 --api=lifecycle".
BENCH_KARPENTER_FLAGS ?=

.PHONY: bench-karpenter
bench-karpenter: build tools ## Karpenter (its KWOK provider) consolidating nodes of one-replica Deployments the surge interceptor guards, through the eviction API bridge against the same consolidation without it: the time until every node is gone, the fewest ready replicas seen. Not part of make bench (minutes).
	$(GO) run ./test/cmd/bench-karpenter --dir=_output/bench-karpenter --bin-dir=$(BIN_DIR) --out=_output/bench/karpenter.json $(BENCH_KARPENTER_FLAGS)

.PHONY: bench-system
bench-system: build tools ## Our API through the aggregator against an equivalent CRD, side by side: write rates and p99 as an admin and as a service account, CPU per write, LIST, heap per object; JSON and a PNG chart in _output/bench.
	$(GO) run ./test/cmd/bench-system --dir=_output/bench-system --bin-dir=$(BIN_DIR) \
		--out=_output/bench/system.json --chart=_output/bench/system.png $(BENCH_SYSTEM_FLAGS)

# BENCH_SCALE_FLAGS sizes the scale benchmark, for example
# BENCH_SCALE_FLAGS="--nodes=300 --steps=3 --idle=30s".
BENCH_SCALE_FLAGS ?=

.PHONY: bench-scale
bench-scale: build tools ## What the product costs as the cluster grows to 1000 kwok nodes and 30000 pods, both APIs, the bridge and the node drain on, side by side with kube-controller-manager: memory per pod, drains of a node and of a pool, the bridge's and the admission plugin's latency, idle CPU, start-up; JSON in _output/bench. Not part of make bench (about 20 minutes on 2 cores).
	$(GO) run ./test/cmd/bench-scale --dir=_output/bench-scale --bin-dir=$(BIN_DIR) --out=_output/bench/scale.json $(BENCH_SCALE_FLAGS)

# BENCH_FAULTS_FLAGS sizes the fault campaign, for example
# BENCH_FAULTS_FLAGS="--seed=7 --nodes=16 --faults=12"; BENCH_FAULTS_APIS
# are the APIs it drains through, one campaign each (coordination: our
# server; lifecycle: lifecycle.k8s.io with evictionrequest-controller;
# upstream: with Kubernetes 1.38's controllers).
BENCH_FAULTS_FLAGS ?=
BENCH_FAULTS_APIS  ?= coordination lifecycle upstream

.PHONY: bench-faults
bench-faults: build tools ## Drains (the declarative node drain of a pool, the plugin, kubectl drain through the bridge) on each API of BENCH_FAULTS_APIS while, on a seeded schedule, the leaders of our processes and Kubernetes 1.38's controllers are killed and frozen, etcd members killed, kube-apiserver restarted, the server's etcd frozen whole and the aggregator's path to the replicas cut; records the history and checks the invariants on it (test/cmd/faultcheck reads the same record), then drains the same workload without faults (the recovery cost); prints the tables and exits non-zero on any violation. Not part of make bench (about 15 minutes an API); make test runs a short one (test-faults).
	@rc=0; for api in $(BENCH_FAULTS_APIS); do \
		$(GO) run ./test/cmd/bench-faults --api=$$api --dir=_output/bench-faults/$$api --bin-dir=$(BIN_DIR) \
			--out=_output/bench/faults-$$api.json $(BENCH_FAULTS_FLAGS) || rc=1; \
	done; exit $$rc

# TEST_FAULTS_FLAGS size the short fault campaigns of make test, one on our
# API and one on lifecycle.k8s.io with evictionrequest-controller: 7 faults,
# every kind at least once, during the drains of 4 nodes, 24 pods, one
# seed, no run without faults.
TEST_FAULTS_FLAGS ?= --seed=1 --nodes=4 --spare-nodes=1 --pods-per-node=4 --faults=7 --fault-interval=6s --drain-deadline=60s --drain-timeout=4m --baseline=false

.PHONY: test-faults faults-campaign
test-faults: build tools ## The short fault campaigns of make test (bench-faults with TEST_FAULTS_FLAGS, on our API and on lifecycle.k8s.io): fail on any violation of the invariants and on a component that does not come back from its fault; the records in _output/test-faults and _output/test-faults-lifecycle.
	$(MAKE) --no-print-directory faults-campaign
faults-campaign:
	$(TIMED) "faults: a short campaign" $(GO) run ./test/cmd/bench-faults --dir=_output/test-faults --bin-dir=$(BIN_DIR) --out=_output/test-faults/faults.json $(TEST_FAULTS_FLAGS)
	$(TIMED) "faults: a short campaign on lifecycle.k8s.io" $(GO) run ./test/cmd/bench-faults --api=lifecycle --dir=_output/test-faults-lifecycle --bin-dir=$(BIN_DIR) \
		--out=_output/test-faults-lifecycle/faults.json $(TEST_FAULTS_FLAGS)

.PHONY: verify
# VERIFY_BUT_LINT are the checks of make verify but golangci-lint, which
# make test runs beside its e2e runs instead (verify-lint-beside).
VERIFY_BUT_LINT := verify-gofmt verify-codegen verify-logcheck verify-mod verify-shellcheck verify-chart verify-manifests verify-kube-score
.PHONY: verify-but-lint
verify-but-lint: $(VERIFY_BUT_LINT)
verify: verify-gofmt verify-codegen verify-lint verify-logcheck verify-mod verify-shellcheck verify-chart verify-manifests verify-kube-score ## gofmt, generated code, golangci-lint (go vet among its linters), logcheck, go mod tidy, shellcheck, helm lint of the chart, the overlays, the values table and the schema rendered from the chart, and kube-score of the overlays.

.PHONY: verify-gofmt
verify-gofmt:
	@out="$$($(TIMED) "verify: gofmt" gofmt -l cmd pkg test hack artifacts)"; if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: verify-vet
verify-vet: ## go vet alone; make verify runs it as golangci-lint's govet.
	$(GO) vet ./...

.PHONY: verify-codegen
verify-codegen:
	$(TIMED) "verify: codegen" hack/verify-codegen.sh

.PHONY: verify-lint
verify-lint: $(BIN_DIR)/golangci-lint ## golangci-lint with .golangci.yaml.
	$(TIMED) "verify: golangci-lint" $(BIN_DIR)/golangci-lint run ./...

# golangci-lint analyses every dependency for its linters' facts: with its
# cache cold, as in CI, it and its build keep both cores busy for minutes.
# The e2e runs mostly wait on their control planes, so make test runs it
# beside them at the lowest CPU priority: it takes the cores they leave,
# and they keep theirs.
.PHONY: verify-lint-beside
verify-lint-beside:
	nice -n 19 $(MAKE) --no-print-directory verify-lint

.PHONY: verify-logcheck
verify-logcheck: $(BIN_DIR)/logcheck ## Kubernetes' structured and contextual logging rules (hack/logcheck.conf).
	$(TIMED) "verify: logcheck" $(BIN_DIR)/logcheck -config hack/logcheck.conf ./...

.PHONY: verify-mod
verify-mod: ## go.mod and go.sum of the project and of its tool modules are tidy.
	$(TIMED) "verify: go mod tidy" hack/verify-mod.sh

.PHONY: verify-shellcheck
verify-shellcheck: ## shellcheck of the shell scripts (installs Debian's shellcheck when missing).
	@command -v shellcheck >/dev/null || hack/install-debian-packages.sh shellcheck
	$(TIMED) "verify: shellcheck" shellcheck .ci/run hack/*.sh

.PHONY: verify-chart
verify-chart: $(HELM_BINS) ## helm lint --strict of the chart with its defaults and with each of its ci/*-values.yaml.
	$(TIMED) "verify: helm lint" $(BIN_DIR)/helm lint --strict charts/evictionrequest --namespace evictionrequest-system
	@for values in charts/evictionrequest/ci/*-values.yaml; do \
		echo "helm lint --strict charts/evictionrequest --values $$values"; \
		$(BIN_DIR)/helm lint --strict charts/evictionrequest --namespace evictionrequest-system --values $$values >/dev/null || { $(BIN_DIR)/helm lint --strict charts/evictionrequest --namespace evictionrequest-system --values $$values; exit 1; }; \
	done

.PHONY: manifests
manifests: $(HELM_BINS) ## Render the chart with each of its ci/*-values.yaml into artifacts/overlays/<scenario>/install.yaml, the install the overlays, make run, the e2e suites and the release use, and the chart's README table of values and values.schema.json from values.yaml: the chart is the one source of the install.
	$(GO) run ./hack/manifests --helm=$(BIN_DIR)/helm

.PHONY: verify-manifests
verify-manifests: $(HELM_BINS) ## Fail when an overlay's install.yaml differs from what make manifests renders.
	$(TIMED) "verify: manifests" $(GO) run ./hack/manifests --helm=$(BIN_DIR)/helm --verify

.PHONY: verify-kube-score
verify-kube-score: $(BIN_DIR)/kube-score ## kube-score over every overlay's install.yaml (the chart with each ci/*-values.yaml); findings fail unless artifacts/kube-score-ignore.txt explains them.
	KUBE_SCORE=$(BIN_DIR)/kube-score $(TIMED) "verify: kube-score" hack/verify-kube-score.sh

$(BIN_DIR)/kube-score: hack/tools/kube-score/go.mod hack/tools/kube-score/go.sum
	@echo ">> Building kube-score from the Go module proxy"
	cd hack/tools/kube-score && $(TIMED) "tools: kube-score" $(GO) build -o $@ github.com/zegl/kube-score/cmd/kube-score
	@touch $@

$(BIN_DIR)/promtool: hack/tools/promtool/go.mod hack/tools/promtool/go.sum
	@echo ">> Building promtool from the Go module proxy, without Prometheus' service discoveries (remove_all_sd)"
	cd hack/tools/promtool && $(TIMED) "tools: promtool" $(GO) build -tags remove_all_sd -o $@ github.com/prometheus/prometheus/cmd/promtool
	@touch $@

$(BIN_DIR)/golangci-lint: hack/tools/golangci-lint/go.mod hack/tools/golangci-lint/go.sum
	@echo ">> Building golangci-lint from the Go module proxy (about two minutes on 2 cores)"
	cd hack/tools/golangci-lint && $(TIMED) "tools: golangci-lint" $(GO) build -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	@touch $@

$(BIN_DIR)/logcheck: hack/tools/logcheck/go.mod hack/tools/logcheck/go.sum
	cd hack/tools/logcheck && $(TIMED) "tools: logcheck" $(GO) build -o $@ sigs.k8s.io/logtools/logcheck
	@touch $@

.PHONY: update-codegen
update-codegen: ## Regenerate deepcopy, defaults, conversions, OpenAPI and clients.
	hack/update-codegen.sh

# NAMESPACE is the namespace the certificates of make certs name; CERTS
# the sets it writes, each with a fresh CA: serving, etcd, bridge-client.
NAMESPACE ?= evictionrequest-system
CERTS     ?= serving,etcd,bridge-client

.PHONY: certs
certs: ## Write the certificates the overlays of artifacts/ read from files, for NAMESPACE: the serving certificate with its CA (default, ha), the ha overlay's etcd CA, member and client certificates, and kube-apiserver's client certificate for the eviction API bridge with its CA and admission configuration (CERTS=serving, etcd or bridge-client for one set).
	$(GO) run ./hack/gen-certs --namespace=$(NAMESPACE) --sets=$(CERTS)

# IMAGE is the reference `make image` tags its tarball with; IMAGE_PLATFORMS
# the platforms of the image index; REGISTRY where `make push` sends it.
IMAGE           ?= evictionrequest-apiserver:$(VERSION)
IMAGE_PLATFORMS ?= linux/amd64
REGISTRY        ?=
IMAGE_BINARIES  := evictionrequest-apiserver evictionrequest-controller surge-interceptor
# The commit the image is built from, and its time: one commit, one digest.
GIT_COMMIT      := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
GIT_TIME        := $(shell git log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
IMAGE_FLAGS      = --bin-dir=_output/image-bin --platforms=$(IMAGE_PLATFORMS) --version=$(VERSION) \
	--revision=$(GIT_COMMIT) --created=$(GIT_TIME) --tag=$(IMAGE) --layout=_output/image --tarball=_output/image.tar

.PHONY: image-bin
image-bin:
	@rm -rf _output/image-bin
	@for platform in $(subst $(comma), ,$(IMAGE_PLATFORMS)); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		for bin in $(IMAGE_BINARIES); do \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false -ldflags "-s -w $(LDFLAGS)" \
				-o _output/image-bin/$${os}_$${arch}/$$bin ./cmd/$$bin; \
		done; \
	done

comma := ,

.PHONY: image
image: image-bin ## Build the image (the server, evictionrequest-controller and the surge interceptor; static, non-root, OCI labels) without a container engine: an OCI layout in _output/image and a tarball _output/image.tar.
	$(GO) run ./hack/image $(IMAGE_FLAGS)

.PHONY: push
push: image-bin ## Push the image to REGISTRY (for example REGISTRY=registry.example.com/team), with the credentials of ~/.docker/config.json.
	@if [[ -z "$(REGISTRY)" ]]; then echo "make push: set REGISTRY, for example REGISTRY=registry.example.com/team" >&2; exit 1; fi
	$(GO) run ./hack/image $(IMAGE_FLAGS) --push=$(REGISTRY)/$(IMAGE)

# RELEASE_REPOSITORY is where a release's image is pushed and what the
# release component pins; RELEASE_PLATFORMS the plugin's platforms,
# RELEASE_IMAGE_PLATFORMS the image's; RELEASE_DIR where the release's
# files go, RELEASE_BIN_DIR its plugin binaries.
RELEASE_REPOSITORY      ?= ghcr.io/evictionrequest/evictionrequest-apiserver
RELEASE_PLATFORMS       ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
RELEASE_IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
RELEASE_DIR             ?= _output/release
RELEASE_BIN_DIR         ?= _output/release-bin

.PHONY: release
release: $(HELM_BINS) ## Cut release VERSION=vX.Y.Z: pin its image repository and tag in the chart and render the overlays again (make manifests), build the image (linux amd64+arm64) and the plugin (linux, darwin; amd64, arm64), and write them with a krew manifest, install YAMLs, the chart and its repository index, a CycloneDX bill of materials of every binary, release notes from CHANGELOG.md and checksums to _output/release.
	@[[ "$(VERSION)" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$$ ]] || { echo "make release: give VERSION=vX.Y.Z" >&2; exit 1; }
	$(GO) run ./hack/release pin --repository=$(RELEASE_REPOSITORY) --version=$(VERSION)
	$(MAKE) manifests
	$(MAKE) image IMAGE=$(RELEASE_REPOSITORY):$(VERSION) IMAGE_PLATFORMS=$(RELEASE_IMAGE_PLATFORMS) VERSION=$(VERSION)
	rm -rf $(RELEASE_BIN_DIR)
	@for platform in $(RELEASE_PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -buildvcs=false -ldflags "-s -w $(LDFLAGS)" \
			-o $(RELEASE_BIN_DIR)/$${os}_$${arch}/kubectl-evictionrequest ./cmd/kubectl-evictionrequest; \
	done
	$(GO) run ./hack/release package --version=$(VERSION) --out=$(RELEASE_DIR) --plugin-bin-dir=$(RELEASE_BIN_DIR) --image-tarball=_output/image.tar \
		--image-bin-dir=_output/image-bin --helm=$(BIN_DIR)/helm --cyclonedx=$(BIN_DIR)/cyclonedx-gomod
	@echo "Release $(VERSION) is in $(RELEASE_DIR). Next: commit charts/evictionrequest and artifacts/overlays, tag $(VERSION), make push REGISTRY=$(patsubst %/,%,$(dir $(RELEASE_REPOSITORY))) IMAGE=$(notdir $(RELEASE_REPOSITORY)):$(VERSION) IMAGE_PLATFORMS=$(RELEASE_IMAGE_PLATFORMS) VERSION=$(VERSION), and upload $(RELEASE_DIR) to the release."

# PINNED_VERSION is the release the chart pins: "v" + its appVersion.
PINNED_VERSION = v$(shell sed -n 's/^appVersion: "\(.*\)"$$/\1/p' charts/evictionrequest/Chart.yaml)

.PHONY: test-release
test-release: ## Cut the release the tree pins again, for this platform only, into _output/release-test (the tree must not change), and open what it wrote: checksums, krew manifest and archives, the plugin's --version, install YAMLs, image, chart and index, bills of materials, notes.
	$(TIMED) "release: cut" $(MAKE) --no-print-directory release VERSION=$(PINNED_VERSION) RELEASE_PLATFORMS=$(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH) \
		RELEASE_IMAGE_PLATFORMS=linux/$(shell $(GO) env GOARCH) RELEASE_DIR=_output/release-test RELEASE_BIN_DIR=_output/release-test-bin
	@git diff --quiet -- charts/evictionrequest artifacts/overlays || { echo "make release changed the chart or the overlays: the tree pins another version or image than it releases" >&2; exit 1; }
	$(TIMED) "release: its tests" $(GO) test -vet=off -count=1 -ldflags=$(TEST_LDFLAGS) ./test/release/... -args -dir=$(CURDIR)/_output/release-test -version=$(PINNED_VERSION) -helm=$(BIN_DIR)/helm

.PHONY: test-image
test-image: ## Build the image and open it: its config, its layer, and the binary in it running --version.
	$(TIMED) "image: build" $(MAKE) --no-print-directory image
	$(TIMED) "image: its tests" $(GO) test -vet=off -count=1 -ldflags=$(TEST_LDFLAGS) ./test/image/... -args -layout=$(CURDIR)/_output/image -version=$(VERSION) -revision=$(GIT_COMMIT)

.PHONY: clean
clean: ## Remove _output.
	rm -rf _output

.PHONY: help
help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "%-14s %s\n", $$1, $$2}'
