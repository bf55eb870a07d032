import AklocDaemon
import AklocPosix

DaemonMain.main(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessEnvironment.current())
