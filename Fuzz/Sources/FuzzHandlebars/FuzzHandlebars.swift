import FuzzSupport

/// The Handlebars compiler and renderer. Input: template text, NUL, JSON record (see
/// TemplateHarness).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHandlebars(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    TemplateHarness.run(FuzzInput.bytes(data, size), dialect: .handlebars, snippets: [
        "greeting": "Hi {{customer.first_name}}",
        "list": "{{#each items}}{{@index}}:{{this}} {{/each}}",
        "loop": "{{> loop}}",   // a campaign may hold a partial that calls itself
    ])
    return 0
}
