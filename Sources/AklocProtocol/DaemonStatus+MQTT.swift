extension DaemonStatus {
    /// The MQTT forwarder in a `status` reply (docs/mqtt.md); absent when
    /// `[mqtt]` is off, and from daemons older than the forwarder.
    public struct MQTT: Hashable, Sendable {
        /// The node in use (connected, being tried, or tried next), e.g.
        /// `mqtts://broker.example.org:8883`.
        public var broker: String
        /// Every node of the broker in the order they are tried (a cluster's
        /// nodes, or the one broker); older daemons send none: `[broker]`.
        public var nodes: [String]
        /// Times the forwarder moved to another node (failovers and the
        /// attempts of an outage), since the daemon started.
        public var switches: UInt64
        public var topic: String
        public var tid: String
        public var connected: Bool
        /// Fixes waiting for the broker's acknowledgement.
        public var queued: Int
        public var queuedBytes: Int
        /// Seconds since the oldest queued fix was queued; absent when the queue is empty.
        public var oldestQueuedAgeSeconds: Double?
        /// Fixes the broker acknowledged, since the daemon started.
        public var published: UInt64
        /// Messages in flight when a connection was lost (each is sent again).
        public var failed: UInt64
        /// Fixes sent more than once: possible duplicates at the broker, as QoS 1 permits.
        public var resent: UInt64
        /// Fixes dropped unpublished by the queue limits, per limit.
        public var dropped: Dropped
        /// Why the last connection attempt or connection failed, while not connected.
        public var lastError: String?
        /// The MQTT version of the connection, "5" or "3.1.1"; absent before
        /// the first connection and from older daemons.
        public var protocolVersion: String?
        /// Whether the broker resumed aklocd's MQTT 5 session at the last connection.
        public var sessionPresent = false

        public struct Dropped: Hashable, Sendable {
            public var maxEntries: UInt64
            public var maxBytes: UInt64
            public var maxAge: UInt64
            /// Older than `[mqtt] expire`: the broker would have dropped them.
            public var expired: UInt64

            public init(maxEntries: UInt64 = 0, maxBytes: UInt64 = 0, maxAge: UInt64 = 0, expired: UInt64 = 0) {
                self.maxEntries = maxEntries
                self.maxBytes = maxBytes
                self.maxAge = maxAge
                self.expired = expired
            }

            public var total: UInt64 { maxEntries + maxBytes + maxAge + expired }
        }

        public init(
            broker: String, topic: String, tid: String, connected: Bool, queued: Int, queuedBytes: Int,
            oldestQueuedAgeSeconds: Double?, published: UInt64, failed: UInt64, resent: UInt64, dropped: Dropped,
            lastError: String?, nodes: [String]? = nil, switches: UInt64 = 0
        ) {
            self.broker = broker
            self.nodes = nodes ?? [broker]
            self.switches = switches
            self.topic = topic
            self.tid = tid
            self.connected = connected
            self.queued = queued
            self.queuedBytes = queuedBytes
            self.oldestQueuedAgeSeconds = oldestQueuedAgeSeconds
            self.published = published
            self.failed = failed
            self.resent = resent
            self.dropped = dropped
            self.lastError = lastError
        }
    }
}
