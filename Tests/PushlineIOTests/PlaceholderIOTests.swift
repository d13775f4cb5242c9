import Testing

@Test func placeholderIO() { #expect(Bool(true)) }
