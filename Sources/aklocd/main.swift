import AklocDaemon
import Foundation

DaemonMain.main(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
