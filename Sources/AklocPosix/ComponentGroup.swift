/// Starts components in order and stops them in reverse, so each one can
/// rely on those before it (the engine's clients need the session monitor;
/// the source's fixes need the client server). A component that fails to
/// start is handled by its own `failurePolicy`: `.abortStart` stops the ones
/// already started, newest first, and passes the error on (a daemon that
/// cannot serve leaves nothing running behind it); `.logAndContinue` reports
/// it to `skipped`, leaves it out, and the rest start.
public struct ComponentGroup {
    public private(set) var components: [any Component] = []
    /// How many of `components`, from the front, are running.
    public private(set) var running = 0
    /// Told of each component left out under `.logAndContinue`.
    public var skipped: (ComponentError) -> Void

    public init(_ components: [any Component] = [], skipped: @escaping (ComponentError) -> Void = { _ in }) {
        self.components = components
        self.skipped = skipped
    }

    /// Adds a component; it is started by the next `start` (or at once when
    /// the group is already running, which is how a reload swaps a source).
    /// One that fails to start at once is not kept, whatever its policy: the
    /// components added after it still start.
    public mutating func append(_ component: any Component) throws(ComponentError) {
        components.append(component)
        guard running == components.count - 1, running > 0 else { return }
        do {
            try component.start()
        } catch {
            components.removeLast()
            guard component.failurePolicy == .logAndContinue else { throw error }
            skipped(error)
            return
        }
        running += 1
    }

    public mutating func start() throws(ComponentError) {
        while running < components.count {
            do {
                try components[running].start()
            } catch {
                guard components[running].failurePolicy == .logAndContinue else {
                    stop()
                    throw error
                }
                components.remove(at: running)
                skipped(error)
                continue
            }
            running += 1
        }
    }

    /// Stops what is running, newest first. Idempotent.
    public mutating func stop() {
        while running > 0 {
            running -= 1
            components[running].stop()
        }
    }

    /// Stops one component and takes it out of the group (a reload that
    /// replaces the gpsd source).
    public mutating func remove(_ component: any Component) {
        guard let index = components.firstIndex(where: { $0 === component }) else { return }
        if index < running {
            component.stop()
            running -= 1
        }
        components.remove(at: index)
    }
}
