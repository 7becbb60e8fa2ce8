# sts-safe-rollout — Kubewarden's Rust policy targets, plus the runner, the stepper and the demo.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := policy.wasm

CARGO ?= cargo
WASM_TARGET := wasm32-wasip1
# Cargo's output directory (CARGO_TARGET_DIR when set).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RUNNER := $(TARGET_DIR)/debug/runner
POLICY_SOURCES := $(wildcard src/*.rs rules/src/*.rs) Cargo.toml rules/Cargo.toml Cargo.lock

# Publishing. The version is the workspace's (Cargo.toml = metadata.yml = artifacthub-pkg.yml, tested).
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)
# Where the policy and the image go: `make publish push-image deploy-manifests REGISTRY=ghcr.io/YOUR-ORG`.
REGISTRY ?= ghcr.io/sts-safe-rollout
TAG ?= v$(VERSION)
POLICY_REF = $(REGISTRY)/policies/sts-safe-rollout:$(TAG)
IMAGE = $(REGISTRY)/sts-stepper:$(TAG)
# buildah without a daemon or overlayfs: the vfs storage driver and chroot isolation work anywhere.
BUILDAH ?= buildah --storage-driver vfs
# `make push-image TLS_VERIFY=false` for a plain-HTTP test registry.
TLS_VERIFY ?= true
MUSL_TARGET := x86_64-unknown-linux-musl
# The image's architecture: amd64 (the native musl build, stepper-static), or arm64 (a cross build,
# stepper-cross). `make image-multiarch` builds both into one manifest list from the cross builds.
IMAGE_ARCH ?= amd64
MUSL_TARGET_amd64 := x86_64-unknown-linux-musl
MUSL_TARGET_arm64 := aarch64-unknown-linux-musl
ifneq ($(filter-out amd64 arm64,$(IMAGE_ARCH)),)
$(error IMAGE_ARCH=$(IMAGE_ARCH) is not amd64 or arm64)
endif
# The Cargo profile of the static stepper: [profile.image] for the image users run; registry-tests uses
# [profile.static-test] (unoptimized, built in far less time: the round trip measures nothing).
STEPPER_PROFILE ?= image
STEPPER_STATIC = $(TARGET_DIR)/$(MUSL_TARGET_$(IMAGE_ARCH))/$(STEPPER_PROFILE)/sts-stepper
# `make install`: sts-stepper and its kubectl plugin link in $(PREFIX)/bin (cargo profile $(INSTALL_PROFILE)).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
INSTALL_PROFILE ?= release
INSTALL_FROM = $(TARGET_DIR)/$(if $(filter dev,$(INSTALL_PROFILE)),debug,$(INSTALL_PROFILE))/sts-stepper
# Rendered manifests, the image's build context and the pushed image's digest go here.
DIST ?= dist
# Each test step's output, read by scripts/test-summary.sh for make test's last line; and the tests a run
# with ALLOW_SKIP=1 skipped (a real component missing), one per line. Tests without ALLOW_SKIP=1 fail instead.
REPORT := $(TARGET_DIR)/test-report
export SKIP_LOG := $(abspath $(TARGET_DIR))/tmp/test-skips.log

.PHONY: fmt lint check unit-tests docs-check e2e-tests validate-manifests registry-tests test demo soak clean runner help \
	setup setup-tests \
	stepper-static image push-image publish deploy-manifests install \
	stepper-cross plugin-binaries plugin-package krew-manifest image-multiarch push-manifest multiarch-tests \
	generate-key-pair sign verify signing-manifests sbom attach-sbom

help: ## List the targets
	@grep -E '^[a-zA-Z_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-22s %s\n", $$1, $$2}'

policy.wasm: $(POLICY_SOURCES) ## Build the policy for wasm32-wasip1 (release, size profile) and copy it here
	rustup target add $(WASM_TARGET) >/dev/null 2>&1 || rustup target add $(WASM_TARGET)
	$(CARGO) build --locked --target $(WASM_TARGET) --release -p sts-safe-rollout
	cp $(TARGET_DIR)/$(WASM_TARGET)/release/sts_safe_rollout.wasm policy.wasm

annotated-policy.wasm: policy.wasm metadata.yml README.md ## Embed metadata.yml with kwctl (needs kwctl)
	@command -v kwctl >/dev/null || { echo "annotated-policy.wasm needs kwctl (https://github.com/kubewarden/kwctl), which is not installed here."; echo "The tests do not need it: 'make e2e-tests' runs e2e.bats through the runner on policy.wasm."; exit 1; }
	kwctl annotate -m metadata.yml -u README.md -o annotated-policy.wasm policy.wasm

runner: ## Build the waPC runner (kwctl run stand-in)
	@if [ -n "$(REUSE_TEST_RUNNER)" ] && [ -x $(RUNNER) ]; then \
	  echo "runner: $(RUNNER) as built by cargo test --workspace"; \
	else \
	  $(CARGO) build --locked -p runner; \
	fi

fmt: ## Check formatting
	$(CARGO) fmt --all -- --check

lint: ## Clippy, warnings are errors
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings

# Clippy as the compiler of the test build. `cargo clippy` is `cargo check` with clippy-driver as
# RUSTC_WORKSPACE_WRAPPER and clippy's arguments in CLIPPY_ARGS; given the same two, `cargo test` lints every
# workspace crate while it compiles it, so make test does not check the ~600 dependencies a second time
# (`make lint` did that in 7 of CI's 30 minutes; BENCHMARKS.md). Lints are errors (-D warnings) as in `make lint`,
# which stays the plain `cargo clippy` for a quick look. Dependencies are compiled by rustc as usual.
CLIPPY_DRIVER := $(shell rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
LINTED = RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__ \
	POLICY_WASM=$(CURDIR)/policy.wasm

# Every target is built (and linted) first, benches included as `cargo clippy --all-targets` lints them; then
# the tests run (the same units: nothing is compiled twice).
unit-tests: policy.wasm ## Every cargo test, compiled with clippy's lints as errors (the runner's fixture tests use policy.wasm)
	mkdir -p $(REPORT)
	@test -n "$(CLIPPY_DRIVER)" || { echo "clippy-driver not found: rustup component add clippy (scripts/setup.sh does)"; exit 1; }
	$(LINTED) $(CARGO) test --locked --workspace --all-targets --no-run 2>&1 | tee $(REPORT)/lint-build.log
	$(LINTED) $(CARGO) test --locked --workspace 2>&1 | tee $(REPORT)/unit-tests.cargo.log

# tests/docs/ is `test = false`: `cargo test --workspace` (unit-tests) leaves it to this step, so it counts once.
# `--workspace` (not `-p sts-stepper`) and the same compiler: the units unit-tests built are reused.
docs-check: ## docs/ against the code: annotations, flags, metrics, Events, gates, the status -o json fields; links; rustdoc without a warning
	mkdir -p $(REPORT)
	$(LINTED) $(CARGO) test --locked --workspace --test docs 2>&1 | tee $(REPORT)/docs-check.cargo.log
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --no-deps -p sts-stepper -p sts-safe-rollout-rules

e2e-tests: policy.wasm runner ## e2e.bats: through kwctl when KWCTL is set or kwctl is installed, else the runner
	@mkdir -p $(REPORT)
	@if [ -n "$${KWCTL:-}" ]; then \
	  echo "e2e.bats with KWCTL=$$KWCTL"; bats --tap e2e.bats | tee $(REPORT)/e2e.tap; \
	elif command -v kwctl >/dev/null; then \
	  $(MAKE) annotated-policy.wasm && bats --tap e2e.bats | tee $(REPORT)/e2e.tap; \
	else \
	  echo "e2e.bats through the runner (kwctl is not installed)"; \
	  KWCTL=$(abspath $(RUNNER)) POLICY=policy.wasm bats --tap e2e.bats | tee $(REPORT)/e2e.tap; \
	fi

# The ClusterAdmissionPolicy is validated against Kubewarden's real CRD from fixtures/crds/, the GitOps sync
# recipes (deploy/gitops/*-sync/, docs/examples/gitops/) against Argo CD's and Flux's.
validate-manifests: ## Validate deploy/, docs/examples/gitops/ and docs/examples/answerers/ against the Kubernetes and CRD schemas; build the Components with kubectl kustomize; the krew manifest
	deploy/validate.sh
	deploy/validate.sh docs/examples/gitops
	deploy/validate.sh docs/examples/answerers
	mkdir -p $(REPORT)
	bats --tap deploy/kustomize.bats | tee $(REPORT)/kustomize.tap
	bats --tap deploy/gitops.bats | tee $(REPORT)/gitops.tap
	bats --tap deploy/krew.bats | tee $(REPORT)/krew.tap

registry-tests: policy.wasm runner ## Round trips through a real registry on 127.0.0.1: policy, image, signatures, SBOMs
	mkdir -p $(REPORT)
	$(MAKE) stepper-static STEPPER_PROFILE=static-test
	RUNNER=$(abspath $(RUNNER)) STEPPER_PROFILE=static-test \
	  STEPPER_STATIC=$(abspath $(TARGET_DIR)/$(MUSL_TARGET)/static-test/sts-stepper) \
	  scripts/registry-test.sh \
	  | tee $(REPORT)/registry-test.checks.log

.PHONY: monitoring-tests
monitoring-tests: ## deploy/monitoring/: CRD schema, promtool check/test rules, every query on a real Prometheus
	mkdir -p $(REPORT)
	scripts/monitoring-test.sh | tee $(REPORT)/monitoring-test.checks.log

# `cargo test --workspace` builds $(RUNNER) too (the runner's tests run it), with the features the whole
# workspace's tests unify; `cargo build -p runner` alone resolves other features and recompiles half of
# wasmtime's dependency tree (7 min on 2 cores), so the steps after unit-tests reuse that binary.
# scripts/setup.sh runs first, before anything is compiled: it installs what is missing or stops naming it.
# Clippy runs inside unit-tests (LINTED above), not as a separate `make lint`.
test: ## Everything CI runs, after scripts/setup.sh; ends with "N passed, N failed, N skipped"
	scripts/setup.sh
	rm -rf $(REPORT) $(SKIP_LOG)
	$(MAKE) setup-tests fmt unit-tests docs-check
	$(MAKE) e2e-tests validate-manifests registry-tests monitoring-tests REUSE_TEST_RUNNER=1
	@echo
	@scripts/test-summary.sh $(REPORT) $(SKIP_LOG)

setup: ## Check the tools and rustup targets the tests need; install the missing ones (apt-get, rustup)
	scripts/setup.sh

setup-tests: ## scripts/*.bats: setup.sh, the skip rule and the summary on fake machines (stubbed PATH)
	mkdir -p $(REPORT)
	bats --tap scripts/setup.bats scripts/skips.bats | tee $(REPORT)/scripts.tap

stepper-static: ## The static sts-stepper for the image (musl, [profile.$(STEPPER_PROFILE)])
	rustup target add $(MUSL_TARGET) >/dev/null 2>&1 || rustup target add $(MUSL_TARGET)
	$(CARGO) build --locked --profile $(STEPPER_PROFILE) --target $(MUSL_TARGET) -p sts-stepper

# The binary's build: for amd64 the native one, for another IMAGE_ARCH its cross build (image-multiarch
# passes IMAGE_BINARY=stepper-cross for amd64 too: one linux/amd64 binary in the tarball and the image).
IMAGE_BINARY ?= $(if $(filter amd64,$(IMAGE_ARCH)),stepper-static,stepper-cross)
# With IMAGE_MANIFEST=NAME the image is added to that manifest list instead of being tagged $(IMAGE).
IMAGE_MANIFEST ?=
image: CROSS_TARGETS = $(MUSL_TARGET_$(IMAGE_ARCH))
image: $(IMAGE_BINARY) ## Build the stepper image $(IMAGE) for linux/$(IMAGE_ARCH) (amd64, arm64) with buildah (scratch + the static binary)
	rm -rf $(DIST)/image-context && mkdir -p $(DIST)/image-context
	cp $(STEPPER_STATIC) $(DIST)/image-context/sts-stepper
	$(BUILDAH) build --isolation chroot --platform linux/$(IMAGE_ARCH) -f stepper/Containerfile \
	  --build-arg VERSION=$(VERSION) $(if $(IMAGE_MANIFEST),--manifest $(IMAGE_MANIFEST),-t $(IMAGE)) $(DIST)/image-context

push-image: ## Push $(IMAGE) (after make image) to the registry
	mkdir -p $(DIST)
	$(BUILDAH) push --tls-verify=$(TLS_VERIFY) --digestfile $(DIST)/sts-stepper.digest $(IMAGE) docker://$(IMAGE)
	@echo "pushed $(IMAGE)@$$(cat $(DIST)/sts-stepper.digest)"

# The release's cross builds (scripts/cross-build.sh: cargo zigbuild, zig from PyPI's ziglang; docs/publish.md):
# the kubectl plugin for linux and darwin on amd64 and arm64, and the multi-arch image. Not part of make test.
PLUGIN_TARGETS := x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin
CROSS_TARGETS ?= $(PLUGIN_TARGETS)
PLUGIN_DIR = $(DIST)/plugin
# A Rust target's OS_ARCH in the tarballs' names: x86_64-apple-darwin → darwin_amd64.
platform_of = $(if $(findstring -apple-darwin,$(1)),darwin,linux)_$(if $(filter x86_64-%,$(1)),amd64,arm64)
IMAGE_ARCHS := amd64 arm64

stepper-cross: ## The stepper for $(CROSS_TARGETS) with cargo zigbuild ([profile.$(STEPPER_PROFILE)]); darwin needs SDKROOT or macOS
	scripts/cross-build.sh $(STEPPER_PROFILE) $(CROSS_TARGETS)

plugin-package: ## $(PLUGIN_DIR)/kubectl-safe_rollout_<os>_<arch>.tar.gz and kubectl-safe_rollout_SHA256SUMS from the four cross builds already there
	scripts/plugin-package.sh $(PLUGIN_DIR) \
	  $(foreach t,$(PLUGIN_TARGETS),$(call platform_of,$(t))=$(TARGET_DIR)/$(t)/$(STEPPER_PROFILE)/sts-stepper)

plugin-binaries: ## The kubectl plugin for linux/darwin × amd64/arm64: cross builds, tarballs, their sha256 sums in $(PLUGIN_DIR)
	$(MAKE) stepper-cross CROSS_TARGETS="$(PLUGIN_TARGETS)"
	$(MAKE) plugin-package

krew-manifest: ## $(PLUGIN_DIR)/safe-rollout.yaml, the krew manifest of $(TAG) from $(PLUGIN_DIR)/kubectl-safe_rollout_SHA256SUMS
	deploy/krew/render.sh $(TAG) $(PLUGIN_DIR)/kubectl-safe_rollout_SHA256SUMS $(PLUGIN_DIR)

# One manifest list $(IMAGE) of an image per arch, each from its cross build (`buildah build --manifest`);
# the list replaces a $(IMAGE) `make image` left. Pushed with `make push-manifest`.
image-multiarch: ## The manifest list $(IMAGE) of linux/amd64 and linux/arm64 images, from the cross builds
	$(MAKE) stepper-cross CROSS_TARGETS="$(foreach a,$(IMAGE_ARCHS),$(MUSL_TARGET_$(a)))"
	$(BUILDAH) manifest rm $(IMAGE) >/dev/null 2>&1 || $(BUILDAH) rmi $(IMAGE) >/dev/null 2>&1 || true
	$(BUILDAH) manifest create $(IMAGE)
	for arch in $(IMAGE_ARCHS); do \
	  $(MAKE) image IMAGE_ARCH=$$arch IMAGE_BINARY=stepper-cross IMAGE_MANIFEST=$(IMAGE); \
	done
	$(BUILDAH) manifest inspect $(IMAGE) | jq -r '.manifests[] | "\(.platform.os)/\(.platform.architecture) \(.digest)"'

push-manifest: ## Push the manifest list $(IMAGE) and every image in it (after make image-multiarch); its digest to $(DIST)/sts-stepper.digest
	mkdir -p $(DIST)
	$(BUILDAH) manifest push --all --tls-verify=$(TLS_VERIFY) --digestfile $(DIST)/sts-stepper.digest $(IMAGE) docker://$(IMAGE)
	@echo "pushed $(IMAGE)@$$(cat $(DIST)/sts-stepper.digest) ($(IMAGE_ARCHS))"

# The multi-arch image and the plugin's linux tarballs through a real registry on 127.0.0.1 (the cross
# builds first: minutes of compiling, so not part of make test).
multiarch-tests: ## image-multiarch + push-manifest to a local registry: both platforms, each its cross build, arm64 run under qemu if present
	$(MAKE) stepper-cross CROSS_TARGETS="$(foreach a,$(IMAGE_ARCHS),$(MUSL_TARGET_$(a)))"
	STEPPER_PROFILE=$(STEPPER_PROFILE) scripts/multiarch-test.sh

# The pushed policy's manifest digest goes to $(DIST)/policy.digest (kwctl push -o json's immutable_ref), as
# push-image records the image's: `make release` pins the policy module by it (registry://…@sha256:…).
publish: ## kwctl annotate, then kwctl push to registry://$(POLICY_REF); its digest to $(DIST)/policy.digest
	@command -v kwctl >/dev/null || { \
	  echo "make publish needs kwctl (https://github.com/kubewarden/kwctl), which is not installed here."; \
	  echo "kwctl annotate embeds metadata.yml in the module (rules, mutating, execution mode: kwctl and the policy-server read them), then kwctl push uploads it."; \
	  echo "For a test registry without kwctl: $(RUNNER) push policy.wasm registry://$(POLICY_REF) --digestfile $(DIST)/policy.digest (unannotated)."; \
	  exit 1; }
	$(MAKE) annotated-policy.wasm
	mkdir -p $(DIST)
	ref=$$(kwctl push -o json annotated-policy.wasm registry://$(POLICY_REF) | jq -r .immutable_ref); \
	digest=$${ref##*@}; \
	if ! [[ $$digest =~ ^sha256:[0-9a-f]{64}$$ ]]; then \
	  echo "publish: kwctl push named no sha256 digest (immutable_ref '$$ref'); $(DIST)/policy.digest not written"; exit 1; \
	fi; \
	printf '%s' "$$digest" >$(DIST)/policy.digest; \
	echo "pushed registry://$(POLICY_REF) = $$ref; digest in $(DIST)/policy.digest"

# Signing (docs/publish.md): cosign-compatible signatures (the `sha256-<digest>.sig` tag beside each artifact)
# written by the runner with the sigstore crate. COSIGN_KEY is a cosign private key file or env://VARIABLE
# holding its PEM; its password is read from COSIGN_PASSWORD. Registry credentials: RUNNER_REGISTRY_USERNAME
# and RUNNER_REGISTRY_PASSWORD (else anonymous).
COSIGN_KEY ?= cosign.key
COSIGN_PUB ?= cosign.pub
INSECURE_FLAG = $(if $(filter false,$(TLS_VERIFY)),--insecure)

generate-key-pair: runner ## Write cosign.key (encrypted with $$COSIGN_PASSWORD) and cosign.pub, as cosign generate-key-pair
	$(RUNNER) generate-key-pair --output-key-prefix cosign

sign: runner ## Sign the published policy and stepper image by digest with $(COSIGN_KEY) (after publish, push-image)
	$(RUNNER) sign --key $(COSIGN_KEY) $(INSECURE_FLAG) registry://$(POLICY_REF) $(IMAGE)

verify: runner ## Verify the published policy's and image's signatures with $(COSIGN_PUB), as kwctl verify / cosign verify
	$(RUNNER) verify --key $(COSIGN_PUB) $(INSECURE_FLAG) registry://$(POLICY_REF)
	$(RUNNER) verify --key $(COSIGN_PUB) $(INSECURE_FLAG) $(IMAGE)

signing-manifests: ## Render deploy/signing/ for the key $(COSIGN_PUB) and $(REGISTRY)/sts-stepper into $(DIST)/signing/
	deploy/signing/render.sh $(COSIGN_PUB) $(REGISTRY)/sts-stepper $(DIST)/signing

# SBOMs (CycloneDX 1.5 JSON, by cargo-cyclonedx, which scripts/setup.sh installs): every crate compiled into
# the policy (target wasm32-wasip1) and into the image's sts-stepper (x86_64-unknown-linux-musl), with its
# version, license and Cargo.lock checksum; build-only dependencies left out. cargo-cyclonedx writes one file
# beside each workspace member's Cargo.toml: the two wanted are moved to $(SBOM_DIR), the others removed.
SBOM_DIR = $(DIST)/sbom
CYCLONEDX = cargo cyclonedx --format json --spec-version 1.5 --no-build-deps --quiet
sbom: ## CycloneDX SBOMs of the policy and the stepper into $(DIST)/sbom/ (cargo-cyclonedx)
	rm -rf $(SBOM_DIR) && mkdir -p $(SBOM_DIR)
	$(CYCLONEDX) --target $(WASM_TARGET)
	mv sts-safe-rollout.cdx.json $(SBOM_DIR)/sts-safe-rollout.cdx.json
	$(CYCLONEDX) --target $(MUSL_TARGET)
	mv stepper/sts-stepper.cdx.json $(SBOM_DIR)/sts-stepper.cdx.json
	find . \( -path ./target -o -path ./.git \) -prune -o -name '*.cdx.json' -not -path './$(DIST)/*' -print | xargs -r rm -f
	@echo "SBOMs: $(SBOM_DIR)/sts-safe-rollout.cdx.json $(SBOM_DIR)/sts-stepper.cdx.json"

attach-sbom: runner ## Publish the SBOMs beside the policy and the image (sha256-<digest>.sbom tags, as cosign attach sbom)
	$(RUNNER) attach-sbom $(INSECURE_FLAG) --sbom $(SBOM_DIR)/sts-safe-rollout.cdx.json registry://$(POLICY_REF)
	$(RUNNER) attach-sbom $(INSECURE_FLAG) --sbom $(SBOM_DIR)/sts-stepper.cdx.json $(IMAGE)

# The release bundle (deploy/release.sh): one install file per mode, the stepper image pinned by DIGEST (by
# default the digest `make push-image`/`push-manifest` recorded) and the policy module by POLICY_DIGEST (by
# default the digest `make publish` recorded): registry://$(REGISTRY)/policies/sts-safe-rollout@sha256:…;
# without one, a placeholder digest, said so (the files are then for review, not for a cluster). Not part of
# make test's builds: deploy/kustomize.bats runs deploy/release.sh.
PLACEHOLDER_DIGEST := sha256:0000000000000000000000000000000000000000000000000000000000000000
DIGEST ?= $(shell cat $(DIST)/sts-stepper.digest 2>/dev/null)
POLICY_DIGEST ?= $(shell cat $(DIST)/policy.digest 2>/dev/null)
.PHONY: release
release: ## $(DIST)/release/install-{kubewarden-cronjob,kubewarden-ha,native-ha}.yaml, image by DIGEST, policy by POLICY_DIGEST, validated
	@digest='$(DIGEST)'; policy_digest='$(POLICY_DIGEST)'; \
	if [ -z "$$digest" ]; then \
	  digest=$(PLACEHOLDER_DIGEST); \
	  echo "release: no DIGEST= and no $(DIST)/sts-stepper.digest (make push-image): placeholder digest $$digest, for review only"; \
	fi; \
	if [ -z "$$policy_digest" ]; then \
	  policy_digest=$(PLACEHOLDER_DIGEST); \
	  echo "release: no POLICY_DIGEST= and no $(DIST)/policy.digest (make publish): placeholder policy digest $$policy_digest, for review only"; \
	fi; \
	deploy/release.sh $(REGISTRY)/sts-stepper@$$digest registry://$(REGISTRY)/policies/sts-safe-rollout@$$policy_digest $(DIST)/release

# The native policy's annotation prefix (deploy/native/; the Kubewarden policy's is its `annotationPrefix`).
ANNOTATION_PREFIX ?= safe-rollout.dev
deploy-manifests: ## Render deploy/ for $(POLICY_REF) and $(IMAGE) (and deploy/native/) into $(DIST)/
	ANNOTATION_PREFIX=$(ANNOTATION_PREFIX) deploy/render.sh registry://$(POLICY_REF) $(IMAGE) $(DIST)

# The runner and the stepper in one cargo invocation: the dependencies they share are built once, with one
# feature set, and cargo keeps both cores busy beside wasmtime's long serial chain (BENCHMARKS.md). The
# `demo` Cargo profile (every dependency unoptimized) and the runner without its `signing` feature build in
# 3 min 54 s cold where the dev profile took 6 min 29 s (BENCHMARKS.md); `make test` builds the dev profile.
DEMO_BIN := $(TARGET_DIR)/demo
demo: ## policy.wasm deciding real AdmissionReviews, the MOCO incident native vs guarded, a canary plan, the primary last (pods, webhook, the built-in Patroni answerer, simulated and against a real Patroni cluster), a rollback by itself
	scripts/setup.sh demo
	$(MAKE) policy.wasm
	$(CARGO) build --locked --profile demo -p runner -p sts-stepper --no-default-features
	RUNNER=$(DEMO_BIN)/runner scripts/demo-policy.sh
	@echo
	STEPPER=$(DEMO_BIN)/sts-stepper scripts/demo-moco.sh
	@echo
	@echo "A canary plan (pause-at: 1,60%:30): held after 1 pod until a person's resume, then at 3 pods for a 30 s bake"
	$(DEMO_BIN)/sts-stepper simulate --scenario scenarios/canary-pause-points.yaml
	@echo
	@echo "The primary last (pre-update-approval, primary-selector: role=primary): each pod approved by the application before its step; web-2, the primary, switches over to web-4 first; a 30 s denial holds the rollout"
	$(DEMO_BIN)/sts-stepper simulate --scenario scenarios/primary-last.yaml
	@echo
	@echo "The same through the application's approval webhook (pre-update-webhook: app): each step approved by a POST's answer; web-2 asked to switch over; a denial, then 40 s of webhook errors: held, Degraded (WebhookErrors) after 3, then on"
	$(DEMO_BIN)/sts-stepper simulate --scenario scenarios/primary-last-webhook.yaml
	@echo
	@echo "Rolling back by itself (on-failure: rollback): a Prometheus check fails after the second step; the stepper writes back v1 and steps the two updated pods back; a re-apply of v2 is held (FailedRevision)"
	$(DEMO_BIN)/sts-stepper simulate --scenario scenarios/auto-rollback.yaml
	@echo
	@echo "The primary last with no code of yours (pre-update-webhook: pg-main, an --answerer-config entry of kind patroni): the built-in Patroni answerer's decision over GET /cluster; each replica waits for the one replaced before it to catch up; the leader pg-2 is switched over first; maintenance mode denies"
	$(DEMO_BIN)/sts-stepper simulate --scenario scenarios/primary-last-patroni.yaml
	@echo
	@echo "The same against a real Patroni cluster (3 PostgreSQL 15 members, etcd as the store, on 127.0.0.1): the stepper passes over a simulated StatefulSet whose pods are the members, asks the built-in answerer for real, and a writer loop runs against the leader: no pod replaced while its member leads, no acknowledged row lost"
	$(CARGO) test --locked -p sts-stepper --test systems -- patroni_rollout::patroni_a_rollout --nocapture --test-threads 1

SOAK_CASES ?= 100000
soak: ## The simulation's property tests with $(SOAK_CASES) random rollouts each (optimized build)
	time SIM_CASES=$(SOAK_CASES) $(CARGO) test --locked --profile soak -p sts-stepper --test sim -- sim_properties:: sim_canary:: sim_approvals:: sim_rollback_properties::

install: ## Install sts-stepper and the kubectl plugin link kubectl-safe_rollout into $(PREFIX)/bin
	$(CARGO) build --locked --profile $(INSTALL_PROFILE) -p sts-stepper
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(INSTALL_FROM) $(DESTDIR)$(BINDIR)/sts-stepper
	ln -sf sts-stepper $(DESTDIR)$(BINDIR)/kubectl-safe_rollout
	@echo "installed $(DESTDIR)$(BINDIR)/sts-stepper and $(DESTDIR)$(BINDIR)/kubectl-safe_rollout (kubectl safe-rollout …)"

# `make fuzz`: the policy's fuzz soak (tests/never_traps/). --profile soak is optimized and keeps debug
# assertions and overflow checks; `cargo test` runs the same test with 4,000 cases. The summary is on
# stderr; stdout (the SDK's native log drain: a line per mutation) is discarded. FUZZ_SEED=N varies it.
FUZZ_CASES ?= 1000000
.PHONY: fuzz
fuzz: ## $(FUZZ_CASES) arbitrary and mutated admission requests through validate, each answer checked
	$(CARGO) test --locked --profile soak -p sts-safe-rollout --test never_traps --no-run
	time FUZZ_CASES=$(FUZZ_CASES) $(CARGO) test --locked --profile soak -p sts-safe-rollout --test never_traps \
	  -- --nocapture --test-threads 1 fuzz_validate >/dev/null

clean: ## Remove build output
	$(CARGO) clean
	rm -rf policy.wasm annotated-policy.wasm dist
