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
                systemd util-linux passwd procps libclang-rt-14-dev

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test lint fuzz demo bench bench-quick install clean

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
	$(SWIFT) format lint --strict -r Sources Tests bench Package.swift

test: build lint
	AKLOC_REQUIRE_TOOLS=1 $(SWIFT) test $(BUILD_FLAGS) -Xswiftc -warnings-as-errors

# The README's first command: a live replay served by aklocd, watched by akloc.
demo: build
	BIN_DIR="$(BIN_DIR)" scripts/demo.sh

clean:
	rm -rf .build

# Benchmarks against gpsd (DESIGN §7, bench/): one release run of akloc-bench
# writes BENCHMARKS.md; bench-quick only checks the harness runs (the test
# suite runs it too, through Tests/IntegrationTests/BenchHarnessTests).
BENCH_BUILD_FLAGS ?= -c release
BENCH_BIN_DIR = $(shell $(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path 2>/dev/null)

bench: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) -Xswiftc -warnings-as-errors
	$(BENCH_BIN_DIR)/akloc-bench --out BENCHMARKS.md --notes bench/NOTES.md --command "make bench BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"

bench-quick: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) -Xswiftc -warnings-as-errors
	$(BENCH_BIN_DIR)/akloc-bench --quick --out $${TMPDIR:-/tmp}/akloc-bench-quick.md --command "make bench-quick BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"
