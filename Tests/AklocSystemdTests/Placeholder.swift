import Testing

@Test func placeholderAklocSystemdTests() {}
