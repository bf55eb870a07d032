import Glibc

// Files for tests that write real ones (state, places, config).

/// A fresh directory under /tmp, removed with `removeTree` at the end of a test.
public func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/akloc-daemon-test.XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(path != nil, "mkdtemp failed")
    return String(cString: path!)
}

public func removeTree(_ path: String) {
    _ = system("rm -rf '\(path)'")
}

public func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    precondition(fd >= 0, "open \(path) failed")
    defer { close(fd) }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    fchmod(fd, mode)
}

public func writeFile(_ path: String, _ text: String, mode: mode_t = 0o644) {
    writeFile(path, Array(text.utf8), mode: mode)
}

public func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count == 0 { break }
        result += buffer[0..<count]
    }
    return String(decoding: result, as: UTF8.self)
}

public func fileMode(_ path: String) -> mode_t? { TestFiles.mode(path) }

public func directoryEntries(_ path: String) -> [String] { TestFiles.entries(path) }
