# akloc — build, test, demo and install. `make test` is the whole suite
# (what CI runs); `make demo` shows a live gpsd replay served by aklocd.

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
CONFIGURATION ?= debug
BUILD_FLAGS  ?= -c $(CONFIGURATION)
BIN_DIR      := $(shell $(SWIFT) build $(BUILD_FLAGS) --show-bin-path 2>/dev/null)

# Every Debian package the project uses: libraries to build against, and the
# real gpsd, gpsfake, gpspipe and systemd tools the tests drive.
DEB_PACKAGES := libgps-dev libsystemd-dev gpsd gpsd-tools gpsd-clients python3-gps \
                systemd util-linux passwd procps libclang-rt-14-dev \
                libmosquitto-dev mosquitto mosquitto-clients openssl

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test lint fuzz demo bench install clean

all: build

# Idempotent: installs only what dpkg does not already have, so it needs no
# network on a machine that is ready.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "make deps: installing $$missing"; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "make deps: all Debian packages present"; fi

build: deps
	$(SWIFT) build $(BUILD_FLAGS) -Xswiftc -warnings-as-errors

lint:
	$(SWIFT) format lint --strict -r Sources Tests Package.swift

test: build lint fuzz
	AKLOC_REQUIRE_TOOLS=1 $(SWIFT) test $(BUILD_FLAGS) -Xswiftc -warnings-as-errors

# libFuzzer over the request decoder and line framer, a fixed number of runs
# so CI stays bounded; fails on any crash, leak or broken round trip.
FUZZ_RUNS ?= 50000
fuzz:
	fuzz/run.sh $(FUZZ_RUNS)

# The README's first command: a live replay served by aklocd, watched by akloc.
demo: build
	BIN_DIR="$(BIN_DIR)" scripts/demo.sh

clean:
	rm -rf .build
