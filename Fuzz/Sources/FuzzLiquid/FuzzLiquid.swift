import FuzzSupport

/// The Liquid compiler and renderer. Input: template text, NUL, JSON record (see TemplateHarness).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLiquid(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    TemplateHarness.run(FuzzInput.bytes(data, size), dialect: .liquid, snippets: [
        "greeting": "Hi {{ customer.first_name | default: 'there' }}",
        "points": "{% if customer.points > 100 %}{{ customer.points | times: 2 }}{% endif %}",
        "loop": "{% include 'loop' %}",   // a campaign may hold a snippet that includes itself
    ])
    return 0
}
