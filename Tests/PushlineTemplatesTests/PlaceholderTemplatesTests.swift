import Testing

@Test func placeholderTemplates() { #expect(Bool(true)) }
