import Testing

@Test func placeholderAklocDaemonTests() {}
