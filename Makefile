# akloc — build, test, demo and install. `make test` is the whole suite
# (what CI runs); `make demo` shows a live gpsd replay served by aklocd.

SWIFT        ?= swift
PREFIX       ?= /usr/local
DESTDIR      ?=
CONFIGURATION ?= debug
BUILD_FLAGS  ?= -c $(CONFIGURATION)
# Deferred (=, not :=): only `make demo` needs it, and a SwiftPM call at parse
# time would wait on the build lock when `make install` runs inside `swift test`.
BIN_DIR       = $(shell $(SWIFT) build $(BUILD_FLAGS) --show-bin-path 2>/dev/null)

# `make install` (README "Install"): binaries in $(PREFIX)/bin; units,
# sysusers.d and tmpfiles.d entries under $(PREFIX)/lib, which systemd
# searches for both /usr and /usr/local; the config in /etc/akloc, where
# aklocd looks by default, never over an existing one.
BINDIR       ?= $(PREFIX)/bin
UNITDIR      ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR  ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR  ?= $(PREFIX)/lib/tmpfiles.d
CONFDIR      := /etc/akloc
MANDIR       ?= $(PREFIX)/share/man
# Installed only when the repository has them: data/* (the geo data files,
# DESIGN §9) and dbus/*.conf (the GeoClue D-Bus policy, DESIGN §12). dbus-daemon
# reads policies from /usr/share/dbus-1/system.d (packages: the .deb sets it)
# and /etc/dbus-1/system.d (local installs), never from /usr/local.
DATADIR      ?= $(PREFIX)/share/akloc
DBUSPOLICYDIR ?= /etc/dbus-1/system.d
# Where `make install` takes aklocd and akloc from; empty means a release build.
INSTALL_BIN_DIR ?=

# `make man` and `make deb`: debian/control's Build-Depends and the
# build-essential set dpkg-buildpackage checks (all but the Swift toolchain),
# and what the package test uses: lintian, and man-db for `man --warnings`.
# In DEB_PACKAGES too, as `make test` builds the package.
DEB_BUILD_PACKAGES := build-essential scdoc debhelper dpkg-dev pkgconf lintian man-db

# `akloc map` serves Debian's Leaflet; its browser tests (make test-map) drive
# real headless Chromium through chromedriver with Debian's Selenium.
# It reads MBTiles files (--tiles FILE.mbtiles) through SQLite (libsqlite3-dev; the
# .deb depends on libsqlite3-0 through shlibs).
MAP_PACKAGES := libjs-leaflet chromium chromium-driver python3-selenium libsqlite3-dev

# Every Debian package the project uses: libraries to build against, and the
# real gpsd, gpsfake, gpspipe and systemd tools the tests drive. The MQTT
# tests start their own mosquitto brokers (never the packaged service) and
# make their TLS certificates with openssl. binutils' readelf checks that
# aklocd links no Foundation (scripts/check-no-foundation.sh), and its nm that
# no module but AklocPosix makes a raw system call (scripts/check-raw-syscalls.sh).
# The geo lookups read country names from iso-codes and offsets from tzdata
# (docs/geodata.md); GeoLookupTests check the calling codes against python3-phonenumbers.
# The track export tests read akloc's GPX with gpxpy and gpxinfo, and its
# GeoJSON with python3-geojson (docs/track.md). `akloc sky` is driven in tmux
# (SkyCommandTests, docs/cli.md).
# The GeoClue tests (docs/desktop.md) start a private system bus (dbus:
# dbus-daemon), run GeoClue's own where-am-i (geoclue-2-demo), compare with
# GeoClue's interface XML (geoclue-2.0), call with gdbus (libglib2.0-bin) and
# drive clients from Python (python3-dbus).
# The broker-cluster test (MQTTNATSClusterTests, docs/mqtt.md) starts its own
# three nats-server nodes (JetStream and MQTT on loopback; never the packaged
# service) and SIGKILLs them mid-replay.
# debootstrap makes the Debian 13 root whose gpsd 3.25 the receiver tests also
# replay every capture through, and where the .deb is installed (TrixieTests,
# scripts/trixie-root.sh, README "Try it").
DEB_PACKAGES := libgps-dev libsystemd-dev gpsd gpsd-tools gpsd-clients python3-gps debootstrap \
                systemd util-linux passwd procps libclang-rt-14-dev \
                libmosquitto-dev mosquitto mosquitto-clients nats-server openssl binutils \
                python3 python3-venv iso-codes tzdata python3-phonenumbers \
                python3-gpxpy gpxinfo python3-geojson tmux \
                dbus geoclue-2.0 geoclue-2-demo libglib2.0-bin python3-dbus $(DEB_BUILD_PACKAGES) $(MAP_PACKAGES)

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build test test-python test-map test-timeline lint fuzz fuzz-commands demo bench bench-quick bench-fleet install uninstall clean soak \
        code-layout \
        soak-sanitizers man deb

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
	$(SWIFT) format lint --strict -r Sources Tests bench Examples Package.swift

# Suites run one at a time: the integration suites replay real gpsd, whose
# gpsfake feeds 1.4 s after it starts, and must not compete for two cores.
# The suite also runs systemd/check-units.sh and a `make install` into a
# temporary DESTDIR (Tests/IntegrationTests/ServiceInstallTests.swift), and the
# receiver tests against Debian 13's gpsd 3.25 in a debootstrapped root, made
# once a week and cached in /var/cache/akloc-test (scripts/trixie-root.sh).
test: build lint fuzz
	scripts/check-no-foundation.sh "$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)/aklocd"
	scripts/check-no-foundation.sh "$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)/where-am-i-swift"
	scripts/check-raw-syscalls.sh "$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)"
	root=$$(scripts/trixie-root.sh) && AKLOC_REQUIRE_TOOLS=1 AKLOC_TRIXIE_ROOT="$$root" \
	    $(SWIFT) test $(BUILD_FLAGS) --no-parallel -Xswiftc -warnings-as-errors
	$(MAKE) test-python
	$(MAKE) test-map
	$(MAKE) test-timeline

# The Python client (clients/python, docs/clients.md): installed into a fresh
# virtual environment (pip only there, from PyPI), so a file missing from the
# package fails; mypy --strict checks the types it ships (py.typed); then its
# tests against a fake daemon and the aklocd built above.
PYTHON  ?= /usr/bin/python3
PY_VENV ?= .build/python-venv
test-python: build
	rm -rf $(PY_VENV) clients/python/build clients/python/src/akloc.egg-info
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install -q ./clients/python pytest mypy
	$(PY_VENV)/bin/mypy --strict --cache-dir $(PY_VENV)/mypy-cache clients/python/src/akloc
	cd clients/python && AKLOC_REQUIRE_TOOLS=1 AKLOC_EXPECT_INSTALLED=1 AKLOC_BIN_DIR="$(BIN_DIR)" \
	    $(abspath $(PY_VENV))/bin/python -m pytest -q -p no:cacheprovider tests

# `akloc map` in headless Chromium against aklocd and a gpsd replay
# (Tests/Browser/test_map.py, docs/map.md); Debian's python3-selenium, so no
# venv. Screenshots land in $(MAP_ARTIFACTS).
MAP_ARTIFACTS ?= .build/test-artifacts/map
test-map: build
	cd Tests/Browser && AKLOC_REQUIRE_TOOLS=1 AKLOC_BIN_DIR="$(BIN_DIR)" AKLOC_ARTIFACTS="$(abspath $(MAP_ARTIFACTS))" \
	    /usr/bin/python3 -m unittest -v test_map

# akloc's visits against an independent implementation (docs/timeline.md,
# "Checked against trackintel"): trackintel 1.4.2 from PyPI in its own venv
# (it brings pandas and geopandas), on days stitched from real receiver
# captures and real GPX walks (gpxpy's, Apache-2.0), imported into the aklocd
# built above; fails below 95 % agreement on the captures, when akloc has no
# visit at a staypoint that no gap explains, or when six looped hours of a
# still receiver are not one visit. The report
# lands in $(TIMELINE_ARTIFACTS).
TIMELINE_VENV ?= .build/trackintel-venv
TIMELINE_ARTIFACTS ?= .build/test-artifacts/timeline
test-timeline: build
	[ -x $(TIMELINE_VENV)/bin/python ] || $(PYTHON) -m venv $(TIMELINE_VENV)
	$(TIMELINE_VENV)/bin/pip install -q trackintel==1.4.2
	mkdir -p $(TIMELINE_ARTIFACTS)
	$(TIMELINE_VENV)/bin/python Tests/Timeline/check_trackintel.py "$(BIN_DIR)" \
	    "$(abspath $(TIMELINE_ARTIFACTS))/trackintel.txt"

# The churn test of `make test` (Tests/IntegrationTests/ChurnTests.swift),
# run longer: SOAK_SECONDS of short-lived clients beside 200 steady
# subscribers on a looping gpsd replay, against the release daemon.
SOAK_SECONDS ?= 180
SOAK_THREADS ?= 6
# One churning connection in this many waits up to 1.2 s for a late reply;
# the waits set the rate: 200 gives the issue's several hundred a second.
SOAK_LONG_WAIT_ONE_IN ?= 200
soak: build
	$(SWIFT) build -c release -Xswiftc -warnings-as-errors
	$(SWIFT) build $(BUILD_FLAGS) --build-tests -Xswiftc -warnings-as-errors
	AKLOC_REQUIRE_TOOLS=1 AKLOC_BIN_DIR="$$($(SWIFT) build -c release --show-bin-path)" \
	    AKLOC_CHURN_SECONDS=$(SOAK_SECONDS) AKLOC_CHURN_THREADS=$(SOAK_THREADS) \
	    AKLOC_CHURN_LONG_WAIT_ONE_IN=$(SOAK_LONG_WAIT_ONE_IN) \
	    $(SWIFT) test $(BUILD_FLAGS) --skip-build --filter ChurnTests

# The same load against aklocd built with the address and the thread
# sanitizer (each in its own build directory); any report fails the run.
SANITIZER_BUILD ?= .build-sanitizers
soak-sanitizers: build
	$(SWIFT) build $(BUILD_FLAGS) --build-tests -Xswiftc -warnings-as-errors
	@set -e; for kind in address thread; do \
	    $(SWIFT) build --build-path $(SANITIZER_BUILD)/$$kind -Xswiftc -sanitize=$$kind --product aklocd; \
	    reports=$$(mktemp -d); \
	    echo "soak-sanitizers: $$kind, $(SOAK_SECONDS) s, reports in $$reports"; \
	    ASAN_OPTIONS=log_path=$$reports/report:detect_leaks=0 TSAN_OPTIONS=log_path=$$reports/report \
	        AKLOC_REQUIRE_TOOLS=1 AKLOC_CHURN_CHECK_MEMORY=0 \
	        AKLOC_BIN_DIR="$$($(SWIFT) build --build-path $(SANITIZER_BUILD)/$$kind --show-bin-path)" \
	        AKLOC_CHURN_SECONDS=$(SOAK_SECONDS) AKLOC_CHURN_THREADS=$(SOAK_THREADS) \
	        AKLOC_CHURN_LONG_WAIT_ONE_IN=$(SOAK_LONG_WAIT_ONE_IN) \
	        $(SWIFT) test $(BUILD_FLAGS) --skip-build --filter ChurnTests; \
	    if ls $$reports/report* >/dev/null 2>&1; then cat $$reports/report*; exit 1; fi; \
	    rm -rf $$reports; \
	done

# libFuzzer over the request decoder and line framer, the track import
# readers and the OwnTracks command parser, a fixed number of runs each so
# CI stays bounded; fails on any crash, leak or broken invariant (fuzz/run.sh).
FUZZ_RUNS ?= 50000
fuzz:
	fuzz/run.sh $(FUZZ_RUNS)

# The OwnTracks command parser alone, a million executions by default
# (issue 30; `make fuzz` runs it with FUZZ_RUNS, like the request decoder).
FUZZ_COMMAND_RUNS ?= 1000000
fuzz-commands:
	FUZZ_TARGETS=commands fuzz/run.sh $(FUZZ_COMMAND_RUNS)

# The README's first command: a live replay served by aklocd, watched by akloc.
demo: build
	BIN_DIR="$(BIN_DIR)" scripts/demo.sh

# The manual pages, akloc(1), aklocd(8) and akloc.conf(5), from man/*.scd.
MAN_PAGES := build/man/akloc.1 build/man/aklocd.8 build/man/akloc.conf.5
man: $(MAN_PAGES)
build/man/%: man/%.scd
	@mkdir -p build/man
	scdoc <$< >$@.tmp && mv $@.tmp $@

# akloc_VERSION_ARCH.deb in this directory (debian/, README "Install from a
# .deb"): a static-stdlib release build in .build/deb through dpkg-buildpackage.
deb: deps
	scripts/deb-build.sh

# Release build, then the files; with DESTDIR set nothing outside it is
# touched. Without DESTDIR, on a systemd host, it also creates the user,
# group and directories and reloads systemd (enabling is left to you).
install: man
	@set -e; bin="$(INSTALL_BIN_DIR)"; \
	if [ -z "$$bin" ]; then \
	    $(SWIFT) build -c release -Xswiftc -warnings-as-errors; \
	    bin=$$($(SWIFT) build -c release --show-bin-path); \
	fi; \
	set -x; \
	install -d -m 0755 "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(UNITDIR)" "$(DESTDIR)$(SYSUSERSDIR)" \
	    "$(DESTDIR)$(TMPFILESDIR)" "$(DESTDIR)$(CONFDIR)"; \
	install -m 0755 "$$bin/aklocd" "$$bin/akloc" "$(DESTDIR)$(BINDIR)/"; \
	sed 's|^ExecStart=/usr/local/bin/aklocd|ExecStart=$(BINDIR)/aklocd|' systemd/aklocd.service \
	    >"$(DESTDIR)$(UNITDIR)/aklocd.service.tmp"; \
	chmod 0644 "$(DESTDIR)$(UNITDIR)/aklocd.service.tmp"; \
	mv "$(DESTDIR)$(UNITDIR)/aklocd.service.tmp" "$(DESTDIR)$(UNITDIR)/aklocd.service"; \
	install -m 0644 systemd/akloc.socket "$(DESTDIR)$(UNITDIR)/akloc.socket"; \
	install -m 0644 systemd/sysusers.d/akloc.conf "$(DESTDIR)$(SYSUSERSDIR)/akloc.conf"; \
	install -m 0644 systemd/tmpfiles.d/akloc.conf "$(DESTDIR)$(TMPFILESDIR)/akloc.conf"; \
	install -d -m 0755 "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" "$(DESTDIR)$(MANDIR)/man8"; \
	install -m 0644 build/man/akloc.1 "$(DESTDIR)$(MANDIR)/man1/akloc.1"; \
	install -m 0644 build/man/akloc.conf.5 "$(DESTDIR)$(MANDIR)/man5/akloc.conf.5"; \
	install -m 0644 build/man/aklocd.8 "$(DESTDIR)$(MANDIR)/man8/aklocd.8"; \
	if [ -n "$$(ls -A data 2>/dev/null)" ]; then \
	    install -d -m 0755 "$(DESTDIR)$(DATADIR)"; cp -R data/. "$(DESTDIR)$(DATADIR)/"; \
	    chmod -R u=rwX,go=rX "$(DESTDIR)$(DATADIR)"; \
	fi; \
	if ls dbus/*.conf >/dev/null 2>&1; then \
	    install -d -m 0755 "$(DESTDIR)$(DBUSPOLICYDIR)"; install -m 0644 dbus/*.conf "$(DESTDIR)$(DBUSPOLICYDIR)/"; \
	fi; \
	set +x; \
	if [ -e "$(DESTDIR)$(CONFDIR)/akloc.conf" ]; then \
	    echo "make install: kept the existing $(DESTDIR)$(CONFDIR)/akloc.conf (the new default is config/akloc.conf)"; \
	else \
	    install -m 0644 config/akloc.conf "$(DESTDIR)$(CONFDIR)/akloc.conf"; \
	    echo "make install: installed $(DESTDIR)$(CONFDIR)/akloc.conf"; \
	fi; \
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	    systemd-sysusers "$(SYSUSERSDIR)/akloc.conf"; \
	    systemd-tmpfiles --create "$(TMPFILESDIR)/akloc.conf"; \
	    systemctl daemon-reload; \
	    echo "make install: done; start it with: systemctl enable --now akloc.socket aklocd.service"; \
	else \
	    echo "make install: then, on the target, as root:" \
	        "systemd-sysusers $(SYSUSERSDIR)/akloc.conf;" \
	        "systemd-tmpfiles --create $(TMPFILESDIR)/akloc.conf;" \
	        "systemctl daemon-reload; systemctl enable --now akloc.socket aklocd.service"; \
	fi

# Removes what install put in place except the config and the state
# (/etc/akloc, /var/lib/akloc), as a Debian "remove" would.
uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/aklocd" "$(DESTDIR)$(BINDIR)/akloc" \
	    "$(DESTDIR)$(UNITDIR)/aklocd.service" "$(DESTDIR)$(UNITDIR)/akloc.socket" \
	    "$(DESTDIR)$(SYSUSERSDIR)/akloc.conf" "$(DESTDIR)$(TMPFILESDIR)/akloc.conf" \
	    "$(DESTDIR)$(MANDIR)/man1/akloc.1" "$(DESTDIR)$(MANDIR)/man5/akloc.conf.5" \
	    "$(DESTDIR)$(MANDIR)/man8/aklocd.8"
	rm -rf "$(DESTDIR)$(DATADIR)"
	for f in dbus/*.conf; do [ -e "$$f" ] && rm -f "$(DESTDIR)$(DBUSPOLICYDIR)/$${f#dbus/}"; done; true

clean:
	rm -rf .build build akloc_*.deb debian/akloc debian/.debhelper debian/files debian/changelog \
	    debian/*.substvars debian/*.debhelper debian/*.debhelper.log debian/debhelper-build-stamp

# Benchmarks against gpsd (DESIGN §7, bench/): one release run of akloc-bench
# writes BENCHMARKS.md; bench-quick only checks the harness runs (the test
# suite runs it too, through Tests/IntegrationTests/BenchHarnessTests).
BENCH_BUILD_FLAGS ?= -c release
BENCH_BIN_DIR = $(shell $(SWIFT) build $(BENCH_BUILD_FLAGS) --show-bin-path 2>/dev/null)

bench: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) -Xswiftc -warnings-as-errors
	$(BENCH_BIN_DIR)/akloc-bench --out BENCHMARKS.md --notes bench/NOTES.md --command "make bench BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"
	$(BENCH_BIN_DIR)/akloc-bench geo --out BENCHMARKS.md --command "make bench BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"
	$(BENCH_BIN_DIR)/akloc-bench track --out BENCHMARKS.md
	$(BENCH_BIN_DIR)/akloc-bench import --out BENCHMARKS.md
	$(BENCH_BIN_DIR)/akloc-bench timeline --out BENCHMARKS.md

# The fleet (DESIGN §7, issues 19 and 30): FLEET_INSTANCES aklocd, one gpsfake
# replay per 50, each an OwnTracks device publishing into FLEET_BROKER on
# loopback: `nats`, a three-node nats-server cluster (JetStream, MQTT on each
# node, every instance with the three nodes in `host`), or `mosquitto`, one
# private mosquitto (the issue 19 run: FLEET_BROKER=mosquitto FLEET_INSTANCES=500).
# FLEET_ARGS adds akloc-bench options: by default `--fleet-lines 2500`, the
# capture's first 2500 lines (about half of it), as 1000 instances at one epoch
# a second keep 2 cores busy; FLEET_ARGS= replays all of it. Its section of
# BENCHMARKS.md is replaced, the rest left as `make bench` wrote it.
FLEET_INSTANCES ?= 1000
FLEET_BROKER ?= nats
FLEET_ARGS ?= --fleet-lines 2500

bench-fleet: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) -Xswiftc -warnings-as-errors
	$(BENCH_BIN_DIR)/akloc-bench --fleet $(FLEET_INSTANCES) --broker $(FLEET_BROKER) $(FLEET_ARGS) --out BENCHMARKS.md --command "make bench-fleet FLEET_INSTANCES=$(FLEET_INSTANCES) FLEET_BROKER=$(FLEET_BROKER) FLEET_ARGS='$(FLEET_ARGS)' BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"

# Rewrites Sources/aklocd/aklocd.order, the functions aklocd runs, which the
# release link lays out together (bench/NOTES.md, "Code layout"). A developer's
# step after large changes; the build only reads the file.
code-layout: deps
	@dpkg-query -W -f='$${Status}\n' valgrind 2>/dev/null | grep -q '^install ok installed$$' || \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind
	SWIFT=$(SWIFT) scripts/code-layout/make-order.sh

bench-quick: deps
	$(SWIFT) build $(BENCH_BUILD_FLAGS) -Xswiftc -warnings-as-errors
	$(BENCH_BIN_DIR)/akloc-bench --quick --out $${TMPDIR:-/tmp}/akloc-bench-quick.md --command "make bench-quick BENCH_BUILD_FLAGS='$(BENCH_BUILD_FLAGS)'"
