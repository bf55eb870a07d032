import Testing

@Test func placeholderAklocGPSDTests() {}
