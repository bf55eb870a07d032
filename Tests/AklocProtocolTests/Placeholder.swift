import Testing

@Test func placeholderAklocProtocolTests() {}
