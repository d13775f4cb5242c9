import Testing

@Test func placeholderRuntime() { #expect(Bool(true)) }
