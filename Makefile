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
  bash zsh fish jq

.PHONY: all deps build test demo install clean

all: build

# Installs only what is missing; through sudo when not root; silent when all present.
deps:
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

clean:
	rm -rf $(BUILD_DIR)
