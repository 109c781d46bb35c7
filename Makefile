# neuron-cache: `make demo` and `make test` do all the set-up on a fresh Debian machine.
# `make test SANITIZE=address,undefined` builds into build-sanitize and runs the whole suite
# under the sanitizers; `make fuzz FUZZ_SECONDS=N` runs every libFuzzer target N seconds.
SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD_DIR ?= build-sanitize
endif
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local
# CI (CI=true) turns warnings into errors.
ifeq ($(CI),true)
WERROR := ON
else
WERROR ?= OFF
endif

DEBIAN_PACKAGES := g++ cmake ninja-build pkg-config make \
  libcxxopts-dev nlohmann-json3-dev libyaml-cpp-dev doctest-dev \
  libcurl4-openssl-dev libssl-dev libcpp-httplib-dev libpugixml-dev \
  bash zsh fish jq curl man-db groff-base python3-jsonschema awscli
# Only `make fuzz` needs these: clang with libFuzzer and the sanitizer runtimes.
FUZZ_DEBIAN_PACKAGES := clang libclang-rt-14-dev

FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
# Any sanitizer report fails the run: reports go to files that `test` checks afterwards
# (a report in a command a test expects to fail would otherwise pass unnoticed).
SANITIZER_REPORTS := $(abspath $(BUILD_DIR))/sanitizer-reports
SANITIZER_ENV := \
  ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:log_path=$(SANITIZER_REPORTS)/asan \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SANITIZER_REPORTS)/ubsan

.PHONY: format check-format all deps deps-debian deps-fuzz deps-npm install-debian-packages build test demo install completions fuzz clean

all: build

deps: deps-debian deps-npm

# Installs only what is missing; through sudo when not root; silent when all present.
deps-debian:
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(DEBIAN_PACKAGES)"

deps-fuzz: deps-debian
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(FUZZ_DEBIAN_PACKAGES)"

install-debian-packages:
	@missing=""; \
	for package in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The official JS Hub client, the witness that our test Hub is faithful (tests/hub-js), and
# s3rver for the S3 tests (tests/s3).
# Node and npm come with the machine image; Debian's are the fallback.
deps-npm: deps-debian
	@if [ -f tests/hub-js/package.json ] && [ ! -d tests/hub-js/node_modules/@huggingface/hub ]; then \
	  if ! command -v npm >/dev/null 2>&1; then \
	    sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	    DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends nodejs npm; \
	  fi; \
	  echo "Installing tests/hub-js npm packages"; \
	  npm ci --prefix tests/hub-js --no-audit --no-fund --loglevel=error; \
	fi
	@# s3rver, the local S3 the S3 tests talk to (tests/s3).
	@if [ -f tests/s3/package.json ] && [ ! -x tests/s3/node_modules/.bin/s3rver ]; then \
	  echo "Installing tests/s3 npm packages"; \
	  npm ci --prefix tests/s3 --no-audit --no-fund --loglevel=error; \
	fi

# Sanitizer builds use clang: g++ links UBSan as a separate runtime that ignores
# log_path, so its reports would reach only stderr, where a test expecting a failure
# would not notice them (see SANITIZER_ENV).
ifneq ($(SANITIZE),)
$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DNEURON_CACHE_SANITIZE=$(SANITIZE)
else
$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DNEURON_CACHE_SANITIZE=$(SANITIZE)
endif

build: deps $(BUILD_DIR)/build.ninja
	@grep -qx 'NEURON_CACHE_SANITIZE:STRING=$(SANITIZE)' $(BUILD_DIR)/CMakeCache.txt \
	  || cmake -DNEURON_CACHE_SANITIZE=$(SANITIZE) $(BUILD_DIR)
	cmake --build $(BUILD_DIR) -j $(JOBS)

ifeq ($(SANITIZE),)
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
else
test: build
	@rm -rf $(SANITIZER_REPORTS) && mkdir -p $(SANITIZER_REPORTS)
	@status=0; env $(SANITIZER_ENV) ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) || status=$$?; \
	if [ -n "$$(ls -A $(SANITIZER_REPORTS))" ]; then \
	  for report in $(SANITIZER_REPORTS)/*; do echo "=== $$report"; cat "$$report"; done; \
	  echo "sanitizer reports above (SANITIZE=$(SANITIZE)): failing" >&2; exit 1; \
	fi; exit $$status
endif

demo: build
	bash tests/demo.sh $(BUILD_DIR)/bin

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Regenerates the committed completion scripts and man page from the CLI's option table.
completions: build
	$(BUILD_DIR)/bin/neuron-cache completion bash > completions/neuron-cache.bash
	$(BUILD_DIR)/bin/neuron-cache completion zsh > completions/_neuron-cache
	$(BUILD_DIR)/bin/neuron-cache completion fish > completions/neuron-cache.fish
	$(BUILD_DIR)/bin/neuron-cache man > completions/neuron-cache.1

# libFuzzer targets (tests/fuzz) built by clang with ASan and UBSan in their own build dir,
# each run FUZZ_SECONDS on a scratch copy of its committed corpus; any crash fails.
fuzz: deps-fuzz
	@test -f $(FUZZ_BUILD_DIR)/build.ninja || \
	  CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DNEURON_CACHE_WERROR=$(WERROR) -DNEURON_CACHE_FUZZ=ON -DNEURON_CACHE_BUILD_TESTS=OFF
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_targets
	bash tests/fuzz/run.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR)

# The code follows .clang-format (clang-format 14, Debian's clang-format package).
FORMATTED_SOURCES = $(shell git ls-files '*.cpp' '*.hpp')
format:
	clang-format -i --style=file $(FORMATTED_SOURCES)
check-format:
	clang-format --dry-run --Werror --style=file $(FORMATTED_SOURCES)
