import AklocCore
import AklocJSON

extension ServerEncoder {
    /// The `satellites` value (docs/protocol.md §7): counts, the dilutions
    /// known, the receiver and times, and each satellite; unknown members
    /// are omitted, as in a location.
    public static func writeSky(_ sky: SkyView, to writer: inout JSONWriter) {
        writer.raw("{\"visible\":")
        writer.integer(Int64(sky.visible))
        writer.raw(",\"used\":")
        writer.integer(Int64(sky.used))
        func number(_ key: StaticString, _ value: Double?) {
            guard let value, value.isFinite else { return }
            writer.byte(UInt8(ascii: ","))
            writer.key(key)
            writer.number(value)
        }
        let dilutions = sky.dilutions
        number("hdop", dilutions.hdop)
        number("vdop", dilutions.vdop)
        number("pdop", dilutions.pdop)
        number("tdop", dilutions.tdop)
        number("gdop", dilutions.gdop)
        number("xdop", dilutions.xdop)
        number("ydop", dilutions.ydop)
        if let device = sky.device {
            writer.raw(",\"device\":")
            writer.string(device)
        }
        if let timestamp = sky.timestamp {
            writer.raw(",\"timestamp\":")
            writer.time(timestamp)
        }
        if let receivedAt = sky.receivedAt {
            writer.raw(",\"receivedAt\":")
            writer.time(receivedAt)
        }
        writer.raw(",\"satellites\":[")
        for (position, satellite) in sky.satellites.enumerated() {
            if position > 0 { writer.byte(UInt8(ascii: ",")) }
            writer.raw("{\"prn\":")
            writer.integer(Int64(satellite.prn))
            if let constellation = satellite.constellation {
                writer.raw(",\"constellation\":")
                writer.string(constellation.rawValue)
            }
            if let svid = satellite.svid {
                writer.raw(",\"svid\":")
                writer.integer(Int64(svid))
            }
            number("elevation", satellite.elevation)
            number("azimuth", satellite.azimuth)
            number("signal", satellite.signal)
            writer.raw(satellite.used ? ",\"used\":true}" : ",\"used\":false}")
        }
        writer.raw("]}")
    }
}
