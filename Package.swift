// swift-tools-version:6.0
import PackageDescription

#if arch(arm64)
    let staticTriple = "aarch64-linux-gnu"
#else
    let staticTriple = "x86_64-linux-gnu"
#endif

let package = Package(
    name: "akloc",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "aklocd", targets: ["aklocd"]),
        .executable(name: "akloc", targets: ["akloc"]),
        // The client library with AKLocationManager's API (DESIGN §13, docs/clients.md).
        .library(name: "AKLocationManager", targets: ["AKLocationManager"]),
    ],
    targets: [
        // libgps-dev and libsystemd-dev (make deps). Not found through pkg-config: its
        // -L/usr/lib/<triple> would come before aklocd's static/ directory (below).
        .systemLibrary(name: "CGPS"),
        .systemLibrary(name: "CSystemd"),
        // Header only: AklocMQTT loads libmosquitto with dlopen when [mqtt] is on.
        .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // SQLite 3 (libsqlite3-dev, make deps), for the MBTiles files of `akloc map --tiles`; only the CLI links it.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // What Glibc's module does not export without _GNU_SOURCE; only AklocPosix imports it.
        .systemLibrary(name: "CPosix"),
        // Pure Swift, but `rounded()` and friends need libm at link time.
        .target(name: "AklocCore", linkerSettings: [.linkedLibrary("m")]),
        // The one leaf for the OS: the EINTR-retrying syscall helper, Errno, descriptors.
        .target(name: "AklocPosix", dependencies: ["AklocCore", "CPosix"]),
        // The one strict JSON reader and writer; pure, no Foundation, no Glibc.
        .target(name: "AklocJSON"),
        // Places, countries, time zones: pure lookups over the data in data/ (DESIGN §9).
        .target(name: "AklocGeo", dependencies: ["AklocCore", "AklocJSON"]),
        // Every wire form, the geo model's included (placemarks, countries, saved places): AklocGeo
        // is pure, so the client library that links this gains code but no I/O.
        .target(name: "AklocProtocol", dependencies: ["AklocCore", "AklocGeo", "AklocJSON"]),
        .target(name: "AklocGPSD", dependencies: ["AklocCore", "AklocJSON", "AklocPosix", "CGPS"]),
        .target(name: "AklocSystemd", dependencies: ["AklocCore", "AklocPosix", "CSystemd"]),
        // What a feature sees of the daemon (DESIGN §1): the host, sinks, the Feature protocol.
        .target(name: "AklocFeature", dependencies: ["AklocCore", "AklocPosix", "AklocProtocol"]),
        // The MQTT forwarder (docs/mqtt.md); the only module that touches CMosquitto.
        .target(
            name: "AklocMQTT",
            dependencies: [
                "AklocCore", "AklocFeature", "AklocGeo", "AklocJSON", "AklocPosix", "AklocProtocol", "CMosquitto",
            ]
        ),
        // The geo lookups over the mapped data, as a feature (docs/places.md).
        .target(
            name: "AklocGeoService",
            dependencies: ["AklocCore", "AklocFeature", "AklocGeo", "AklocJSON", "AklocPosix", "AklocProtocol"]),
        // The saved places and region monitoring (docs/places.md).
        .target(
            name: "AklocPlaces",
            dependencies: ["AklocCore", "AklocFeature", "AklocGeo", "AklocJSON", "AklocPosix", "AklocProtocol"]),
        // The track recorder and its journal of days (docs/track.md).
        // Reading track files to import (GPX, Google's exports), streamed; used by the CLI.
        .target(name: "AklocTrackImport", dependencies: ["AklocCore", "AklocJSON", "AklocProtocol"]),
        .target(
            name: "AklocTrack", dependencies: ["AklocCore", "AklocFeature", "AklocJSON", "AklocPosix", "AklocProtocol"]),
        // Visits and trips from the track (DESIGN §15, docs/timeline.md).
        .target(
            name: "AklocTimeline",
            dependencies: [
                "AklocCore", "AklocFeature", "AklocGeo", "AklocJSON", "AklocPosix", "AklocProtocol", "AklocTrack",
            ]),
        // The GeoClue2 D-Bus front and the NMEA feed (docs/desktop.md), on AklocSystemd's sd-bus.
        .target(
            name: "AklocGeoClue",
            dependencies: ["AklocCore", "AklocFeature", "AklocPosix", "AklocSystemd"]),
        // HTTP/1.1 and server-sent events for `akloc map`'s page (docs/map.md), on AklocPosix's stream server.
        .target(name: "AklocHTTP", dependencies: ["AklocCore", "AklocJSON", "AklocPosix"]),
        .target(
            name: "AklocDaemon",
            dependencies: [
                "AklocCore", "AklocFeature", "AklocPosix", "AklocProtocol", "AklocGPSD", "AklocSystemd", "AklocMQTT",
                "AklocGeoService", "AklocPlaces", "AklocTrack", "AklocTimeline", "AklocGeoClue",
            ]
        ),
        // The Swift runtime linked in statically, as the Debian package ships it:
        // 1.9 MB less resident memory per aklocd (BENCHMARKS.md, issue 19).
        // Linked by the toolchain's lld with packed relative relocations (DT_RELR,
        // glibc ≥ 2.36) and no exported symbols, so the loader no longer reads
        // 705 KiB of relocations and 406 KiB of dynamic symbols at every start:
        // 0.9 MiB less peak (bench/NOTES.md).
        .executableTarget(
            name: "aklocd", dependencies: ["AklocDaemon", "AklocPosix"],
            exclude: ["aklocd.order", "unnamed-text.ld", "static"],
            linkerSettings: [
                .unsafeFlags([
                    "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                    "-Xlinker", "--no-export-dynamic",
                ]),
                // The code aklocd runs, laid out together (scripts/code-layout rewrites the list).
                .unsafeFlags(
                    [
                        "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/aklocd/aklocd.order",
                        "-Xlinker", "--no-warn-symbol-ordering",
                        "-Xlinker", "--script=\(Context.packageDirectory)/Sources/aklocd/unnamed-text.ld",
                    ], .when(configuration: .release)),
                // libgps and libstdc++ from their static archives, found first in static/<triple>
                // (links to Debian's libgps-dev and libstdc++-12-dev files), so aklocd takes only the
                // objects it calls: libgps.so alone NEEDs libstdc++.so, 1 MiB resident for a C++ binding
                // aklocd never uses. libgps's D-Bus transport is still linked, so libdbus stays. Where the
                // links do not resolve, lld finds the shared libraries as before.
                .unsafeFlags(
                    [
                        "-L\(Context.packageDirectory)/Sources/aklocd/static/\(staticTriple)",
                        "-Xlinker", "-l:libdbus-1.so.3",
                    ], .when(configuration: .release)),
            ]),
        .executableTarget(
            name: "akloc",
            dependencies: [
                "AklocCore", "AklocGeo", "AklocHTTP", "AklocJSON", "AklocPosix", "AklocProtocol", "AklocTrackImport",
                "CSQLite",
            ],
            // The map page's files, compiled into the binary (docs/map.md).
            resources: [
                .embedInCode("MapPage/index.html"), .embedInCode("MapPage/map.js"), .embedInCode("MapPage/map.css"),
                .embedInCode("MapPage/arrow.svg"), .embedInCode("MapPage/pin.svg"),
            ]),
        .target(
            name: "AKLocationManager", dependencies: ["AklocCore", "AklocJSON", "AklocPosix", "AklocProtocol"]),
        .executableTarget(
            name: "where-am-i-swift", dependencies: ["AKLocationManager"], path: "Examples/where-am-i-swift"),
        .target(
            name: "AklocTestSupport",
            dependencies: ["AklocCore", "AklocFeature", "AklocPosix", "AklocSystemd"],
            path: "Tests/AklocTestSupport"
        ),
        // The benchmark harness (issue 7, `make bench`); CBench wraps epoll for it, and holds the
        // libgps floor (the least a program reading gpsd through libgps pays).
        .target(name: "CBench", path: "bench/CBench", linkerSettings: [.linkedLibrary("gps")]),
        .executableTarget(
            name: "akloc-bench",
            dependencies: [
                "AklocCore", "AklocJSON", "AklocPosix", "AklocProtocol", "AklocGeo", "AklocTrack", "AklocTimeline",
                "AklocTestSupport", "CBench",
            ],
            path: "bench/akloc-bench"
        ),
        .testTarget(name: "AklocCoreTests", dependencies: ["AklocCore"]),
        .testTarget(name: "AklocJSONTests", dependencies: ["AklocJSON"]),
        .testTarget(name: "AklocTrackImportTests", dependencies: ["AklocTrackImport", "AklocProtocol"]),
        // `akloc`'s own parts (the map server's parser and options).
        // CSQLite: the tests write the MBTiles files they open.
        .testTarget(name: "AklocCLITests", dependencies: ["akloc", "CSQLite"]),
        .testTarget(name: "AklocProtocolTests", dependencies: ["AklocJSON", "AklocProtocol", "AklocTestSupport"]),
        .testTarget(name: "AklocGPSDTests", dependencies: ["AklocGPSD", "AklocTestSupport"]),
        .testTarget(name: "AklocPosixTests", dependencies: ["AklocPosix", "AklocTestSupport"]),
        .testTarget(
            name: "AklocHTTPTests", dependencies: ["AklocCore", "AklocHTTP", "AklocPosix", "AklocTestSupport"]),
        .testTarget(name: "AklocGeoTests", dependencies: ["AklocGeo", "AklocProtocol", "AklocTestSupport"]),
        .testTarget(name: "AklocSystemdTests", dependencies: ["AklocSystemd", "AklocTestSupport"]),
        .testTarget(name: "AklocDaemonTests", dependencies: ["AklocDaemon", "AklocGeoService", "AklocTestSupport"]),
        // Each feature against Tests/AklocTestSupport's FakeHost, on virtual time.
        .testTarget(name: "AklocPlacesTests", dependencies: ["AklocPlaces", "AklocFeature", "AklocTestSupport"]),
        .testTarget(
            name: "AklocGeoServiceTests", dependencies: ["AklocGeoService", "AklocFeature", "AklocTestSupport"]),
        .testTarget(
            name: "AklocTrackTests", dependencies: ["AklocTrack", "AklocFeature", "AklocPosix", "AklocTestSupport"]),
        .testTarget(
            name: "AklocTimelineTests",
            dependencies: ["AklocTimeline", "AklocFeature", "AklocGeo", "AklocPosix", "AklocTrack", "AklocTestSupport"]),
        .testTarget(
            name: "AklocGeoClueTests", dependencies: ["AklocGeoClue", "AklocFeature", "AklocPosix", "AklocTestSupport"]),
        .testTarget(
            name: "AklocMQTTTests", dependencies: ["AklocMQTT", "AklocFeature", "AklocPosix", "AklocTestSupport"]),
        .testTarget(
            name: "AKLocationManagerTests", dependencies: ["AKLocationManager", "AklocTestSupport"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["AklocCore", "AklocTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every function in a section of its own (swiftc gives one only to public
// ones), so lld can lay out the code aklocd runs together, in the order of
// Sources/aklocd/aklocd.order: the kernel maps 64 KiB around every page of
// code touched, so scattered start-up code kept 5.3 MiB of text resident
// (bench/NOTES.md, "Code layout").
for target in package.targets where [.regular, .executable].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-function-sections"])]
}

// A member is visible only where its module is imported (SE-0444), so each
// file's imports say what it uses.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
