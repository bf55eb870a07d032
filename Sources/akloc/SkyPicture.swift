import AklocCore
import Glibc

/// The text of `akloc sky`'s live view, as `cgps` shows a receiver: a
/// header, a table of satellites and a polar plot of the sky, laid out for
/// `columns` × `rows` (80 × 24 and up; narrower drops the plot). Pure: the
/// command adds the escape sequences that place it on the screen.
struct SkyPicture {
    /// Where the plot's satellites and rings go: elevation 90° at the centre,
    /// the horizon on the outer ring, north up, east right.
    struct Plot {
        /// Half the plot's height in rows and its width in columns (a
        /// terminal cell is about twice as tall as wide).
        var radiusRows: Int
        var radiusColumns: Int { radiusRows * 2 }

        /// The cell (row, column) from the plot's top left for a direction.
        func cell(elevation: Double, azimuth: Double) -> (row: Int, column: Int) {
            let distance = (90 - min(90, max(0, elevation))) / 90
            let radians = azimuth * .pi / 180
            let x = distance * sin(radians) * Double(radiusColumns)
            let y = -distance * cos(radians) * Double(radiusRows)
            return (radiusRows + Int(y.rounded()), radiusColumns + Int(x.rounded()))
        }
    }

    var sky: SkyView?
    var location: Location?
    var columns: Int
    var rows: Int

    /// The table's header; every row is as wide.
    static let tableHeader = "GNSS     PRN SVID  El  Az SNR U"
    static let tableWidth = tableHeader.count

    /// One string per row, none longer than `columns` characters.
    func lines() -> [String] {
        var lines = header()
        let bodyRows = max(0, rows - lines.count)
        let table = self.table(rows: bodyRows)
        let plotRadius = min((bodyRows - 2) / 2, (columns - Self.tableWidth - 4) / 4)
        let plot = plotRadius >= 4 ? self.plot(radiusRows: plotRadius) : []
        for index in 0..<max(table.count, plot.count) where lines.count < rows {
            var line = index < table.count ? table[index] : ""
            if index < plot.count {
                line = line.padding(to: Self.tableWidth + 2) + plot[index]
            }
            lines.append(line)
        }
        return lines.map { String($0.clipped(to: columns).trimmingTrailingSpaces) }
    }

    private func header() -> [String] {
        guard let sky else { return ["akloc sky: waiting for gpsd's first SKY report…", ""] }
        var first = "\(sky.device ?? "receiver")  \(sky.used)/\(sky.visible) used"
        for (name, value) in [
            ("HDOP", sky.dilutions.hdop), ("VDOP", sky.dilutions.vdop), ("PDOP", sky.dilutions.pdop),
        ] {
            if let value { first += "  \(name) \(Formatting.fixed(value, 2))" }
        }
        if let time = sky.timestamp { first += "  \(time.iso8601)" }
        var second = "no fix"
        if let location {
            second =
                "\(location.mode.rawValue) \(location.fixStatus?.label ?? "fix")  \(Formatting.coordinate(location))"
            if let accuracy = location.horizontalAccuracy { second += "  ±\(Formatting.fixed(accuracy, 1)) m" }
        }
        return [first, second]
    }

    /// Used satellites first, then by signal, as many as fit; the last row
    /// says how many did not.
    private func table(rows: Int) -> [String] {
        guard let sky, rows >= 2 else { return [] }
        var lines = [Self.tableHeader]
        let ordered = sky.satellites.enumerated().sorted { a, b in
            if a.element.used != b.element.used { return a.element.used }
            return (a.element.signal ?? -1, -a.offset) > (b.element.signal ?? -1, -b.offset)
        }.map(\.element)
        let room = rows - 1
        let shown = ordered.count <= room ? ordered.count : room - 1
        for satellite in ordered.prefix(shown) {
            lines.append(Self.row(satellite))
        }
        if shown < ordered.count { lines.append("… \(ordered.count - shown) more") }
        return lines
    }

    static func row(_ satellite: SkyView.Satellite) -> String {
        func number(_ value: Double?, _ width: Int) -> String {
            (value.map { String(Int($0.rounded())) } ?? "-").leftPadded(to: width)
        }
        return (satellite.constellation?.rawValue ?? "?").padding(to: 8)
            + String(satellite.prn).leftPadded(to: 4) + (satellite.svid.map(String.init) ?? "-").leftPadded(to: 5)
            + number(satellite.elevation, 4) + number(satellite.azimuth, 4) + number(satellite.signal, 4)
            + (satellite.used ? " Y" : " N")
    }

    /// The plot's rows: the horizon and 45° rings as dots, N/E/S/W on the
    /// horizon, each satellite above the horizon with a known direction as
    /// its PRN (a used one bracketed: `[12]`). A label never covers another:
    /// it moves a row up or down, else the satellite is a bare `•` (used
    /// ones are placed first, so they keep their numbers).
    func plot(radiusRows: Int) -> [String] {
        let geometry = Plot(radiusRows: radiusRows)
        let height = radiusRows * 2 + 1
        let width = geometry.radiusColumns * 2 + 1
        var grid = [[Character]](repeating: [Character](repeating: " ", count: width), count: height)
        for ring in [0.0, 45.0] {
            for step in 0..<360 where step % 3 == 0 {
                let cell = geometry.cell(elevation: ring, azimuth: Double(step))
                grid[cell.row][cell.column] = "·"
            }
        }
        grid[0][geometry.radiusColumns] = "N"
        grid[height - 1][geometry.radiusColumns] = "S"
        grid[radiusRows][0] = "W"
        grid[radiusRows][width - 1] = "E"
        grid[radiusRows][geometry.radiusColumns] = "+"
        var taken = [[Bool]](repeating: [Bool](repeating: false, count: width), count: height)
        let satellites = (sky?.satellites ?? []).filter { $0.used } + (sky?.satellites ?? []).filter { !$0.used }
        for satellite in satellites {
            guard let elevation = satellite.elevation, let azimuth = satellite.azimuth, elevation >= 0 else {
                continue
            }
            let cell = geometry.cell(elevation: elevation, azimuth: azimuth)
            let label = Array(satellite.used ? "[\(satellite.prn)]" : "\(satellite.prn)")
            // Centred on the satellite's cell, kept inside the plot.
            let start = max(0, min(width - label.count, cell.column - label.count / 2))
            let free = [cell.row, cell.row - 1, cell.row + 1].first { row in
                (0..<height).contains(row) && !taken[row][start..<(start + label.count)].contains(true)
            }
            if let row = free {
                for (offset, character) in label.enumerated() {
                    grid[row][start + offset] = character
                    taken[row][start + offset] = true
                }
            } else if !taken[cell.row][cell.column] {
                grid[cell.row][cell.column] = "•"
                taken[cell.row][cell.column] = true
            }
        }
        return grid.map { String($0) }
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    fileprivate var trimmingTrailingSpaces: Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " { end = index(before: end) }
        return self[..<end]
    }

    fileprivate func clipped(to width: Int) -> String {
        count <= width ? self : String(prefix(width))
    }
}
