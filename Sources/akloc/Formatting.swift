import AklocCore
import AklocJSON
import AklocProtocol
import Glibc

/// Human-readable output for `--human` and `status`.
enum Formatting {
    /// `15:09:11  52.51234 N  5.30123 E  3.1 m/s  +5.0 s` for a location event.
    static func locationLine(_ location: Location, afterTimeInterval: Double?, note: String? = nil) -> String {
        var parts = [clock(location.receivedAt ?? location.timestamp), coordinate(location)]
        if let speed = location.speed { parts.append("\(fixed(speed, 1)) m/s") }
        if let quality = quality(location) { parts.append(quality) }
        if let afterTimeInterval { parts.append("+\(fixed(afterTimeInterval, 1)) s") }
        if let note { parts.append(note) }
        return parts.joined(separator: "  ")
    }

    /// `DGPS 11 sats HDOP 0.9`: how the fix was made, or nil when the
    /// location says nothing about it.
    static func quality(_ location: Location) -> String? {
        var parts: [String] = []
        if let status = location.fixStatus { parts.append(status.label) }
        if let used = location.satellitesUsed { parts.append("\(used) sats") }
        if let hdop = location.hdop { parts.append("HDOP \(fixed(hdop, 1))") }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// `52.51234 N  5.30123 E`.
    static func coordinate(_ location: Location) -> String {
        coordinate(latitude: location.latitude, longitude: location.longitude)
    }

    static func coordinate(latitude: Double, longitude: Double) -> String {
        "\(fixed(abs(latitude), 5)) \(latitude < 0 ? "S" : "N")  \(fixed(abs(longitude), 5)) \(longitude < 0 ? "W" : "E")"
    }

    /// One line for any event, or nil for lines `--human` does not show.
    static func eventLine(_ event: ServerEvent) -> String? {
        switch event {
        case .didGetFirstLocation(let location):
            return locationLine(location, afterTimeInterval: nil, note: "first fix")
        case .didUpdateLocation(let location, let afterTimeInterval):
            return locationLine(location, afterTimeInterval: afterTimeInterval)
        case .didGetError(let error):
            return "\(clock(nil))  error: \(error.rawValue)"
        case .didGetNotification(let notification):
            return "\(clock(nil))  \(notification.rawValue)"
        case .didEnterRegion(let region):
            return locationLine(region.location, afterTimeInterval: nil, note: "entered \(region.name)")
        case .didExitRegion(let region):
            return locationLine(region.location, afterTimeInterval: nil, note: "left \(region.name)")
        case .didVisit(let visit):
            let departure = visit.departure.map { " departed \($0.iso8601)" } ?? ""
            let place = visit.place.map { " at \($0)" } ?? ""
            return "\(clock(nil))  visit\(place) arrived \(visit.arrival.iso8601)\(departure)"
        case .change(let change):
            if let location = change.newLocation {
                return locationLine(location, afterTimeInterval: nil, note: change.keyPath.description)
            }
            return "\(clock(nil))  \(change.keyPath) = \(value(change.new))"
        case .unknown(let name, var fields):
            // A newer daemon's event: its name and what it says.
            fields["event"] = nil
            return "\(clock(nil))  \(name)" + (fields.isEmpty ? "" : " \(JSONValue.object(fields).jsonString)")
        case .hello, .reply:
            return nil
        }
    }

    /// A key path value for humans: strings bare, coordinates as N/E, others as JSON.
    static func value(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        if let latitude = value["latitude"]?.doubleValue, let longitude = value["longitude"]?.doubleValue,
            value.objectValue?.count == 2
        {
            return coordinate(latitude: latitude, longitude: longitude)
        }
        return value.jsonString
    }

    /// `HH:MM:SS` in local time of `time`, or of now.
    static func clock(_ time: FixTime?) -> String {
        var seconds: time_t
        if let time {
            seconds = time_t(time.secondsSince1970)
        } else {
            seconds = Glibc.time(nil)
        }
        var parts = tm()
        localtime_r(&seconds, &parts)
        return "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))"
    }

    /// The `akloc status` text.
    static func status(_ status: DaemonStatus) -> String {
        var lines: [String] = []
        func row(_ label: String, _ text: String) {
            lines.append(label + String(repeating: " ", count: max(1, 11 - label.count)) + text)
        }
        row("state:", status.state.rawValue + (status.paused && status.state != .paused ? " (paused)" : ""))
        row("source:", "\(status.source.name), \(status.source.connected ? "connected" : "not connected")")
        if let fix = status.fix {
            let location = fix.location
            var parts = [coordinate(location), location.mode.rawValue]
            if let accuracy = location.horizontalAccuracy { parts.append("±\(fixed(accuracy, 1)) m") }
            if let speed = location.speed { parts.append("\(fixed(speed, 1)) m/s") }
            if let quality = quality(location) { parts.append(quality) }
            parts.append("\(duration(fix.ageSeconds)) ago")
            row("fix:", parts.joined(separator: ", "))
        } else {
            row("fix:", "none yet")
        }
        let clients = status.clients
        row("clients:", "\(clients.connected) connected, \(clients.updating) updating, \(clients.observing) observing")
        let counters = status.counters
        row(
            "counters:",
            "\(counters.fixesReceived) fixes, \(counters.deliveries) deliveries, "
                + "\(counters.eventsCoalesced) coalesced, \(counters.clientsDropped) clients dropped, "
                + "\(counters.badRequests) bad requests, \(counters.linesTooLong) lines too long")
        if let mqtt = status.mqtt {
            var parts = [mqtt.broker, mqtt.connected ? "connected" : "not connected", "\(mqtt.queued) queued"]
            if let age = mqtt.oldestQueuedAgeSeconds { parts.append("oldest \(duration(age)) ago") }
            parts.append("\(mqtt.published) published, \(mqtt.failed) failed, \(mqtt.resent) resent")
            let dropped = mqtt.dropped
            parts.append(
                dropped.total == 0
                    ? "0 dropped"
                    : "\(dropped.total) dropped (\(dropped.maxEntries) max-entries, \(dropped.maxBytes) max-bytes, "
                        + "\(dropped.maxAge) max-age, \(dropped.expired) expired)")
            row("mqtt:", parts.joined(separator: ", "))
            if mqtt.nodes.count > 1 {
                let index = (mqtt.nodes.firstIndex(of: mqtt.broker) ?? 0) + 1
                row("", "node \(index) of \(mqtt.nodes.count), \(mqtt.switches) switch(es)")
            }
            let version = mqtt.protocolVersion.map {
                ", MQTT \($0)" + (mqtt.sessionPresent ? " (session resumed)" : "")
            }
            row(
                "",
                "topic \(mqtt.topic), tid \(mqtt.tid)" + (version ?? "")
                    + (mqtt.lastError.map { "; last error: \($0)" } ?? ""))
        }
        row("daemon:", "aklocd \(status.version), up \(duration(status.uptimeSeconds))")
        return lines.joined(separator: "\n")
    }

    /// `0.8 s`, `42 s`, `5 min 3 s`, `2 h 5 min`, `3 d 4 h`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        if seconds < 10 { return "\(fixed(seconds, 1)) s" }
        let whole = Int(seconds.rounded(.down))
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        if whole < 86_400 { return "\(whole / 3600) h \(whole % 3600 / 60) min" }
        return "\(whole / 86_400) d \(whole % 86_400 / 3600) h"
    }

    /// `value` with exactly `digits` decimals (no locale).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "?" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return String(value) }
        let integer = Int64(scaled)
        let divisor = Int64(scale)
        var text = (value < 0 && integer != 0 ? "-" : "") + String(integer / divisor)
        if digits > 0 {
            let fraction = String(integer % divisor)
            text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
        }
        return text
    }

    private static func pad(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// Seconds for messages: `10` or `2.5`.
func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
}
