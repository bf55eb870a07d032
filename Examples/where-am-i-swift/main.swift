// where-am-i-swift: AKLocationManager as an iOS app would use it, on Linux.
//
//   swift run where-am-i-swift              the first location, then exit
//   swift run where-am-i-swift --updates 3  and three throttled updates
//   swift run where-am-i-swift --once       one location with async/await
//   swift run where-am-i-swift --events 3   three updates from the AsyncSequence
//
// The socket is $AKLOC_SOCKET, else /run/akloc/akloc.sock (docs/clients.md).
import AKLocationManager
import AklocCore
import Dispatch
import Glibc

final class WhereAmI: AKLocationManagerDelegate, @unchecked Sendable {
    let manager = AKLocationManager()
    var updatesWanted = 0

    func run() {
        manager.delegate = self
        manager.updateLocationTimeInterval = (min: 1, max: 60)
        manager.startUpdatingLocationWithRequest(.whenInUse)
    }

    func locationManager(_ manager: AKLocationManager, didGetFirstLocation location: CLLocation) {
        print("first \(location.coordinate.latitude) \(location.coordinate.longitude)")
        if updatesWanted == 0 { exit(0) }
    }

    func locationManager(
        _ manager: AKLocationManager, didUpdateLocation location: CLLocation, afterTimeInterval timeInterval: Double
    ) {
        print("update \(location.coordinate.latitude) \(location.coordinate.longitude) after \(timeInterval)")
        updatesWanted -= 1
        if updatesWanted <= 0 { exit(0) }
    }

    func locationManager(_ manager: AKLocationManager, didGetNotification notification: AKLocationManagerNotification) {
        print("notification \(notification.rawValue)")
    }

    func locationManager(_ manager: AKLocationManager, didGetError error: AKLocationManagerError) {
        print("error \(error)")
        if error == .locationManagerCantDetectFirstLocation { exit(1) }
    }

    func printOneLocation() async {
        do {
            let here = try await manager.location(timeout: 5)
            print("here \(here.coordinate.latitude) \(here.coordinate.longitude)")
            exit(0)
        } catch {
            print("error \(error.code): \(error)")
            exit(1)
        }
    }

    func printEvents(_ count: Int) async {
        var seen = 0
        let events = manager.events
        manager.updateLocationTimeInterval = (min: 1, max: 60)
        manager.startUpdatingLocation()
        for await event in events {
            if case .didUpdateLocation(let location, let interval?) = event {
                print("event \(location.coordinate.latitude) after \(interval)")
                seen += 1
                if seen == count { exit(0) }
            }
        }
    }
}

let app = WhereAmI()
let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> Int? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    return index + 1 < arguments.count ? Int(arguments[index + 1]) : 0
}
if arguments.contains("--once") {
    Task { await app.printOneLocation() }
} else if let count = option("--events") {
    Task { await app.printEvents(max(count, 1)) }
} else {
    app.updatesWanted = option("--updates") ?? 0
    app.run()
}
dispatchMain()
