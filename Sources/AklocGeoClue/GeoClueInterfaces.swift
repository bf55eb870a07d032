/// The three GeoClue2 interfaces akloc serves, member for member as Debian
/// `geoclue-2.0`'s /usr/share/dbus-1/interfaces/org.freedesktop.GeoClue2.*.xml
/// declares them (a test compares the two), and the introspection XML made
/// from them.
public enum GeoClueInterfaces {
    public struct Argument: Hashable, Sendable {
        public var name: String
        public var type: String
        /// "in" or "out" for methods; nil for signals.
        public var direction: String?
    }

    public enum Member: Hashable, Sendable {
        case property(name: String, type: String, access: String, defaultValue: String? = nil)
        case method(name: String, arguments: [Argument])
        case signal(name: String, arguments: [Argument])
    }

    public struct Interface: Hashable, Sendable {
        public var name: String
        public var members: [Member]
    }

    public static let managerName = "org.freedesktop.GeoClue2.Manager"
    public static let clientName = "org.freedesktop.GeoClue2.Client"
    public static let locationName = "org.freedesktop.GeoClue2.Location"

    public static let manager = Interface(
        name: managerName,
        members: [
            .property(name: "InUse", type: "b", access: "read"),
            .property(name: "AvailableAccuracyLevel", type: "u", access: "read"),
            .method(name: "GetClient", arguments: [Argument(name: "client", type: "o", direction: "out")]),
            .method(name: "CreateClient", arguments: [Argument(name: "client", type: "o", direction: "out")]),
            .method(name: "DeleteClient", arguments: [Argument(name: "client", type: "o", direction: "in")]),
            .method(name: "AddAgent", arguments: [Argument(name: "id", type: "s", direction: "in")]),
        ])

    public static let client = Interface(
        name: clientName,
        members: [
            .property(name: "Location", type: "o", access: "read"),
            .property(name: "DistanceThreshold", type: "u", access: "readwrite", defaultValue: "0"),
            .property(name: "TimeThreshold", type: "u", access: "readwrite", defaultValue: "0"),
            .property(name: "DesktopId", type: "s", access: "readwrite"),
            .property(name: "RequestedAccuracyLevel", type: "u", access: "readwrite"),
            .property(name: "Active", type: "b", access: "read"),
            .method(name: "Start", arguments: []),
            .method(name: "Stop", arguments: []),
            .signal(
                name: "LocationUpdated",
                arguments: [Argument(name: "old", type: "o"), Argument(name: "new", type: "o")]),
        ])

    public static let location = Interface(
        name: locationName,
        members: [
            .property(name: "Latitude", type: "d", access: "read"),
            .property(name: "Longitude", type: "d", access: "read"),
            .property(name: "Accuracy", type: "d", access: "read"),
            .property(name: "Altitude", type: "d", access: "read"),
            .property(name: "Speed", type: "d", access: "read"),
            .property(name: "Heading", type: "d", access: "read"),
            .property(name: "Description", type: "s", access: "read"),
            .property(name: "Timestamp", type: "(tt)", access: "read"),
        ])

    /// What every object also answers (sd-bus serves Peer itself).
    static let standard = """
         <interface name="org.freedesktop.DBus.Peer">
          <method name="Ping"/>
          <method name="GetMachineId">
           <arg type="s" name="machine_uuid" direction="out"/>
          </method>
         </interface>
         <interface name="org.freedesktop.DBus.Introspectable">
          <method name="Introspect">
           <arg name="xml_data" type="s" direction="out"/>
          </method>
         </interface>
         <interface name="org.freedesktop.DBus.Properties">
          <method name="Get">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="out"/>
          </method>
          <method name="GetAll">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="props" type="a{sv}" direction="out"/>
          </method>
          <method name="Set">
           <arg name="interface_name" type="s" direction="in"/>
           <arg name="property_name" type="s" direction="in"/>
           <arg name="value" type="v" direction="in"/>
          </method>
          <signal name="PropertiesChanged">
           <arg type="s" name="interface_name"/>
           <arg type="a{sv}" name="changed_properties"/>
           <arg type="as" name="invalidated_properties"/>
          </signal>
         </interface>

        """

    /// The introspection document of one node: its interfaces and the names
    /// of its children.
    public static func introspection(interfaces: [Interface], children: [String]) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        if !interfaces.isEmpty { xml += standard }
        for interface in interfaces { xml += render(interface) }
        for child in children { xml += " <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }

    static func render(_ interface: Interface) -> String {
        var xml = " <interface name=\"\(interface.name)\">\n"
        for member in interface.members {
            switch member {
            case .property(let name, let type, let access, let defaultValue):
                if let defaultValue {
                    xml += "  <property name=\"\(name)\" type=\"\(type)\" access=\"\(access)\">\n"
                    xml += "   <annotation name=\"org.freedesktop.Accounts.DefaultValue\" value=\"\(defaultValue)\"/>\n"
                    xml += "  </property>\n"
                } else {
                    xml += "  <property name=\"\(name)\" type=\"\(type)\" access=\"\(access)\"/>\n"
                }
            case .method(let name, let arguments), .signal(let name, let arguments):
                let tag = if case .method = member { "method" } else { "signal" }
                if arguments.isEmpty {
                    xml += "  <\(tag) name=\"\(name)\"/>\n"
                    continue
                }
                xml += "  <\(tag) name=\"\(name)\">\n"
                for argument in arguments {
                    let direction = argument.direction.map { " direction=\"\($0)\"" } ?? ""
                    xml += "   <arg name=\"\(argument.name)\" type=\"\(argument.type)\"\(direction)/>\n"
                }
                xml += "  </\(tag)>\n"
            }
        }
        return xml + " </interface>\n"
    }
}
