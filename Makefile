# sts-safe-rollout — Kubewarden's Rust policy targets, plus the runner, the stepper and the demo.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := policy.wasm

CARGO ?= cargo
WASM_TARGET := wasm32-wasip1
# Cargo's output directory (CARGO_TARGET_DIR when set).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
RUNNER := $(TARGET_DIR)/debug/runner
# Shared design and real fixtures live beside the checkout.
SHARED ?= ../shared
POLICY_SOURCES := $(wildcard src/*.rs) Cargo.toml Cargo.lock

.PHONY: fmt lint check unit-tests e2e-tests validate-manifests test demo soak clean runner help

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
	$(CARGO) build --locked -p runner

fmt: ## Check formatting
	$(CARGO) fmt --all -- --check

lint: ## Clippy, warnings are errors
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings

unit-tests: policy.wasm ## Every cargo test (the runner's fixture tests use policy.wasm)
	POLICY_WASM=$(CURDIR)/policy.wasm $(CARGO) test --locked --workspace

e2e-tests: policy.wasm runner ## e2e.bats: through kwctl when KWCTL is set or kwctl is installed, else the runner
	@if [ -n "$${KWCTL:-}" ]; then \
	  echo "e2e.bats with KWCTL=$$KWCTL"; bats e2e.bats; \
	elif command -v kwctl >/dev/null; then \
	  $(MAKE) annotated-policy.wasm && bats e2e.bats; \
	else \
	  echo "e2e.bats through the runner (kwctl is not installed)"; \
	  KWCTL=$(abspath $(RUNNER)) POLICY=policy.wasm bats e2e.bats; \
	fi

validate-manifests: ## Validate deploy/ against the Kubernetes schemas (installs kubernetes-validate from PyPI)
	deploy/validate.sh

test: fmt lint unit-tests e2e-tests validate-manifests ## Everything CI runs

demo: policy.wasm runner ## policy.wasm deciding real AdmissionReviews, then the MOCO incident native vs guarded
	SHARED=$(SHARED) RUNNER=$(RUNNER) scripts/demo-policy.sh
	@echo
	scripts/demo-moco.sh

SOAK_CASES ?= 100000
soak: ## The simulation's property test with $(SOAK_CASES) random rollouts (optimized build)
	time SIM_CASES=$(SOAK_CASES) $(CARGO) test --locked --profile soak -p sts-stepper --test sim_properties

clean: ## Remove build output
	$(CARGO) clean
	rm -f policy.wasm annotated-policy.wasm
