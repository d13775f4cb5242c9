import Testing

@Test func placeholderEncoding() { #expect(Bool(true)) }
