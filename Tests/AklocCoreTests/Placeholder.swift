import Testing

@Test func placeholderAklocCoreTests() {}
