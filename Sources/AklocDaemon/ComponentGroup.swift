/// Starts components in order and stops them in reverse, so each one can
/// rely on those before it (the engine's clients need the session monitor;
/// the source's fixes need the client server). When one fails to start,
/// the ones already started are stopped, newest first, and the error is
/// passed on: a daemon that cannot serve leaves nothing running behind it.
struct ComponentGroup {
    private(set) var components: [any Component] = []
    /// How many of `components`, from the front, are running.
    private(set) var running = 0

    init(_ components: [any Component] = []) {
        self.components = components
    }

    /// Adds a component; it is started by the next `start` (or at once when
    /// the group is already running, which is how a reload swaps a source).
    /// One that fails to start at once is not kept: the caller decides
    /// whether the daemon runs without it, and the components added after it
    /// still start.
    mutating func append(_ component: any Component) throws(ComponentError) {
        components.append(component)
        if running == components.count - 1, running > 0 {
            do {
                try component.start()
            } catch {
                components.removeLast()
                throw error
            }
            running += 1
        }
    }

    mutating func start() throws(ComponentError) {
        while running < components.count {
            do {
                try components[running].start()
            } catch {
                stop()
                throw error
            }
            running += 1
        }
    }

    /// Stops what is running, newest first. Idempotent.
    mutating func stop() {
        while running > 0 {
            running -= 1
            components[running].stop()
        }
    }

    /// Stops one component and takes it out of the group (a reload that
    /// replaces the gpsd source).
    mutating func remove(_ component: any Component) {
        guard let index = components.firstIndex(where: { $0 === component }) else { return }
        if index < running {
            component.stop()
            running -= 1
        }
        components.remove(at: index)
    }
}
