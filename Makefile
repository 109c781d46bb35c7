# neuron-cache: `make demo` and `make test` do all the set-up on a fresh Debian machine.
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
  libcurl4-openssl-dev libssl-dev libcpp-httplib-dev \
  bash zsh fish jq curl man-db groff-base python3-jsonschema awscli

.PHONY: all deps deps-debian deps-npm build test demo install completions clean

all: build

deps: deps-debian deps-npm

# Installs only what is missing; through sudo when not root; silent when all present.
deps-debian:
	@missing=""; \
	for package in $(DEBIAN_PACKAGES); do \
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

$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DNEURON_CACHE_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

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

clean:
	rm -rf $(BUILD_DIR)
