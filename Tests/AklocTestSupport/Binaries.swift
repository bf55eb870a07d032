import Foundation

/// Where `swift build` put the package's executables: beside the test bundle.
public enum Binaries {
    /// `AKLOC_BIN_DIR` names another build's (a release or sanitizer build for `make soak`).
    public static var directory: URL {
        if let override = ProcessInfo.processInfo.environment["AKLOC_BIN_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // XCTest bundles are directories: .build/debug/aklocPackageTests.xctest
        while directory.pathExtension == "xctest" || directory.lastPathComponent == "MacOS" {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }

    public static var aklocd: String { directory.appendingPathComponent("aklocd").path }
    public static var akloc: String { directory.appendingPathComponent("akloc").path }

    /// The package root, found from this source file's path.
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
}
