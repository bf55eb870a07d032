// where-am-i-swift: AKLocationManager as an iOS app would use it, on Linux.
//
//   swift run where-am-i-swift              the first location, then exit
//   swift run where-am-i-swift --updates 3  and three throttled updates
//
// The socket is $AKLOC_SOCKET, else /run/akloc/akloc.sock (docs/clients.md).
import AKLocationManager
import Dispatch
import Glibc

final class WhereAmI: AKLocationManagerDelegate {
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
}

let app = WhereAmI()
let arguments = CommandLine.arguments.dropFirst()
if let index = arguments.firstIndex(of: "--updates"), let count = arguments.dropFirst(index - 1).dropFirst().first {
    app.updatesWanted = Int(count) ?? 0
}
app.run()
dispatchMain()
