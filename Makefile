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
# Tests spend part of their time waiting (on sockets, a modelled latency, a commit's cost): one
# job more than cores keeps the cores busy (on 2 cores: 339 s instead of about 360).
TEST_JOBS ?= $(shell echo $$(( $$(nproc) + 1 )))
PREFIX ?= /usr/local
# CI (CI=true) turns warnings into errors.
ifeq ($(CI),true)
WERROR := ON
else
WERROR ?= OFF
endif

# What building neuron-cache needs (`make install`, `make build-only`): the compiler, CMake
# and the libraries. The README names them for dnf too.
BUILD_DEBIAN_PACKAGES := g++ cmake ninja-build pkg-config make binutils \
  libcxxopts-dev nlohmann-json3-dev libyaml-cpp-dev libcurl4-openssl-dev libssl-dev \
  liblz4-dev librust-blake3-dev libpugixml-dev
# What the tests and the demo add (`make test`, `make demo`): the test Hub's and the unit
# tests' libraries, the shells the completions are tested in, the schema checker, the AWS CLI.
TEST_DEBIAN_PACKAGES := doctest-dev libcpp-httplib-dev \
  bash zsh fish jq curl man-db groff-base python3-jsonschema awscli
DEBIAN_PACKAGES := $(BUILD_DEBIAN_PACKAGES) $(TEST_DEBIAN_PACKAGES)
# What the release packages add (`make dist`, `make wheel`, `make deb` and their checks):
# patchelf sets the bundle's relative run paths, dpkg-dev computes and checks the .deb's
# Depends, python3-venv makes the fresh environments the wheel is installed into,
# debootstrap builds the minimal root file system the bundle is run in.
DIST_DEBIAN_PACKAGES := patchelf dpkg-dev python3 python3-venv debootstrap
# Only `make fuzz` needs these: clang with libFuzzer and the sanitizer runtimes.
FUZZ_DEBIAN_PACKAGES := clang libclang-rt-14-dev

# The sanitizer suite's tree (see below): `make fuzz` builds it if it is not there.
FUZZ_BUILD_DIR ?= build-sanitize
COMMA := ,
FUZZ_SECONDS ?= 60
# Any sanitizer report fails the run: reports go to files that `test` checks afterwards
# (a report in a command a test expects to fail would otherwise pass unnoticed).
SANITIZER_REPORTS := $(abspath $(BUILD_DIR))/sanitizer-reports
SANITIZER_ENV := \
  ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:log_path=$(SANITIZER_REPORTS)/asan \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SANITIZER_REPORTS)/ubsan

.PHONY: format check-format all deps deps-debian deps-build deps-dist deps-fuzz deps-npm install-debian-packages \
  build build-stripped demo-tools test demo install install-debug completions fuzz clean dist wheel deb packages check-packages check-minimal-root \
  prefetch-minimal-root

all: build

deps: deps-debian deps-npm

# Installs only what is missing; through sudo when not root; silent when all present.
deps-debian:
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(DEBIAN_PACKAGES)"

deps-build:
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(BUILD_DEBIAN_PACKAGES)"

deps-dist: deps-build
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(DIST_DEBIAN_PACKAGES)"

deps-fuzz: deps-debian
	@$(MAKE) --no-print-directory install-debian-packages PACKAGES="$(FUZZ_DEBIAN_PACKAGES)"

# Elsewhere than Debian and Ubuntu (no dpkg-query) it only says what to install (README).
install-debian-packages:
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "Not a Debian system: install the counterparts of these packages yourself (README, Install): $(PACKAGES)"; \
	  exit 0; \
	fi; \
	missing=""; \
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
# With ASan and UBSan the same tree also builds the libFuzzer targets (NEURON_CACHE_FUZZ):
# `make fuzz` after `make test SANITIZE=address,undefined` (as .ci/run does) compiles
# nothing again, where a tree of its own would take a second clang build.
ifneq ($(SANITIZE),)
$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps deps-fuzz
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DNEURON_CACHE_SANITIZE=$(SANITIZE) -DNEURON_CACHE_UNITY_BUILD=$(UNITY) \
	  $(if $(filter address$(COMMA)undefined,$(SANITIZE)),-DNEURON_CACHE_FUZZ=ON)
else
# `make install` and the release packages configure without the tests (BUILD_TESTS=OFF, so
# they need the build dependencies only); `make build`, `test` and `demo` turn them on.
$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps-build
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	  -DNEURON_CACHE_SANITIZE=$(SANITIZE) -DNEURON_CACHE_BUILD_TESTS=$(BUILD_TESTS) \
	  -DNEURON_CACHE_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)
endif
BUILD_TESTS ?= ON
install install-debug dist wheel deb packages: BUILD_TESTS = OFF

# Unity batches (cmake/Unity.cmake): a clean build takes half the time; UNITY=OFF builds
# file by file, for edit-compile loops.
UNITY ?= ON

# A build dir configured for install (no tests), another SANITIZE or another UNITY is turned over.
WITH_TESTS = @grep -qx 'NEURON_CACHE_SANITIZE:STRING=$(SANITIZE)' $(BUILD_DIR)/CMakeCache.txt \
	  && grep -qx 'NEURON_CACHE_BUILD_TESTS:BOOL=ON' $(BUILD_DIR)/CMakeCache.txt \
	  && grep -qx 'NEURON_CACHE_UNITY_BUILD:BOOL=$(UNITY)' $(BUILD_DIR)/CMakeCache.txt \
	  || cmake -DNEURON_CACHE_SANITIZE=$(SANITIZE) -DNEURON_CACHE_BUILD_TESTS=ON \
	       -DNEURON_CACHE_UNITY_BUILD=$(UNITY) $(BUILD_DIR)

build: deps $(BUILD_DIR)/build.ninja
	$(WITH_TESTS)
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The test Hub and the stand-in compiler the package checks run the demo with.
demo-tools: deps-debian $(BUILD_DIR)/build.ninja
	$(WITH_TESTS)
	cmake --build $(BUILD_DIR) -j $(JOBS) --target neuron-cache-test-hub fake_neuronx_cc

# The stripped binary and its debug file (cmake/Install.cmake): what install and the packages take.
build-stripped: deps-build $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target neuron-cache-stripped

ifeq ($(SANITIZE),)
test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(TEST_JOBS)
else
test: build
	@rm -rf $(SANITIZER_REPORTS) && mkdir -p $(SANITIZER_REPORTS)
	@status=0; env $(SANITIZER_ENV) ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(TEST_JOBS) || status=$$?; \
	if [ -n "$$(ls -A $(SANITIZER_REPORTS))" ]; then \
	  for report in $(SANITIZER_REPORTS)/*; do echo "=== $$report"; cat "$$report"; done; \
	  echo "sanitizer reports above (SANITIZE=$(SANITIZE)): failing" >&2; exit 1; \
	fi; exit $$status
endif

demo: build
	bash tests/demo.sh $(BUILD_DIR)/bin

# Build dependencies only: no test tool is installed. The binary is stripped; `make
# install-debug` adds its debug info as bin/.debug/neuron-cache.debug, where gdb looks.
install: build-stripped
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

install-debug: install
	cmake --install $(BUILD_DIR) --prefix $(PREFIX) --component debug

# Extra CMake options, e.g. CMAKE_ARGS=-DNEURON_CACHE_PORTABLE=OFF (read when build/ is configured).
CMAKE_ARGS ?=

# Release packages, into $(DIST_DIR) (cmake/packaging, README "Install"):
#   dist   neuron-cache-<version>-linux-x86_64.tar.gz, self-contained (glibc <= 2.34 from the
#          host), audited by cmake/packaging/audit.py before it is written;
#   wheel  neuron_cache-<version>-py3-none-manylinux_2_34_x86_64.whl, made from the bundle;
#   deb    neuron-cache_<version>_amd64.deb (CPack), Depends on Debian's libcurl4 and libssl3.
DIST_DIR ?= $(BUILD_DIR)/dist
PYTHON ?= python3
dist: deps-dist build-stripped
	$(PYTHON) cmake/packaging/bundle.py $(BUILD_DIR) $(DIST_DIR)

wheel: dist
	$(PYTHON) cmake/packaging/wheel.py $(DIST_DIR)

deb: deps-dist build-stripped
	cpack --config $(BUILD_DIR)/CPackConfig.cmake -B $(DIST_DIR)

packages: dist wheel deb

# Checks of the release packages (tests/packaging): the bundle audit and its failure cases,
# the wheel installed into a fresh venv (--version and the demo from its PATH), the .deb
# installed on this machine (dpkg -i, root), demo, removed. Then, apart because it takes
# longer, the bundle's demo in a minimal Debian root (debootstrap, chroot) against a
# directory repo and the test Hub.
check-packages: packages demo-tools
	bash tests/packaging/test_packages.sh $(BUILD_DIR) $(DIST_DIR)

check-minimal-root: dist demo-tools
	bash tests/packaging/minimal_root.sh $(BUILD_DIR) $(DIST_DIR)

# Only downloads the minimal root's Debian packages into the cache check-minimal-root reads.
prefetch-minimal-root: deps-dist
	bash tests/packaging/minimal_root.sh --download-only $(BUILD_DIR)

# Regenerates the committed completion scripts and man page from the CLI's option table.
completions: build
	$(BUILD_DIR)/bin/neuron-cache completion bash > completions/neuron-cache.bash
	$(BUILD_DIR)/bin/neuron-cache completion zsh > completions/_neuron-cache
	$(BUILD_DIR)/bin/neuron-cache completion fish > completions/neuron-cache.fish
	$(BUILD_DIR)/bin/neuron-cache man > completions/neuron-cache.1

# libFuzzer targets (tests/fuzz) built by clang with ASan and UBSan in the sanitizer
# suite's tree, each run FUZZ_SECONDS on a scratch copy of its committed corpus; any crash
# fails.
fuzz: deps-fuzz
	@test -f $(FUZZ_BUILD_DIR)/build.ninja || \
	  CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) \
	    -DNEURON_CACHE_SANITIZE=address,undefined -DNEURON_CACHE_FUZZ=ON
	@grep -qx 'NEURON_CACHE_FUZZ:BOOL=ON' $(FUZZ_BUILD_DIR)/CMakeCache.txt || cmake -DNEURON_CACHE_FUZZ=ON $(FUZZ_BUILD_DIR)
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
