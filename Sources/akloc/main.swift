import Glibc

exit(AklocCLI.main(Array(CommandLine.arguments.dropFirst())))
