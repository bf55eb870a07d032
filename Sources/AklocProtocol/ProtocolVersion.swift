public enum AklocProtocolVersion { public static let protocolVersion = 1 }
