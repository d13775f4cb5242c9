// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets, kept out of the main package so building and testing Pushline never
// compiles them. Build and run with `scripts/fuzz` (see docs/fuzzing.md); it passes
// `--sanitize fuzzer --sanitize address`, which makes libFuzzer supply `main` and each target
// export `LLVMFuzzerTestOneInput` (a single source file not named main.swift is built as a
// library, so it defines no `main` of its own).
let package = Package(
    name: "pushline-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "pushline", path: ".."),
    ],
    targets: [
        // The oracles every target shares: an independent strict JSON validator and the
        // finding report.
        .target(name: "FuzzSupport", dependencies: [
            .product(name: "PushlineCore", package: "pushline"),
            .product(name: "PushlineTemplates", package: "pushline"),
            .product(name: "PushlineEncoding", package: "pushline"),
            .product(name: "PushlineRuntime", package: "pushline"),
        ]),
        .executableTarget(name: "FuzzJSON", dependencies: [
            "FuzzSupport", .product(name: "PushlineCore", package: "pushline"),
        ]),
        .executableTarget(name: "FuzzAudienceLine", dependencies: [
            "FuzzSupport",
            .product(name: "PushlineCore", package: "pushline"),
            .product(name: "PushlineEncoding", package: "pushline"),
            .product(name: "PushlineRuntime", package: "pushline"),
        ]),
        // zlib, for audience-gzip's second opinion.
        .target(name: "FuzzZlib", linkerSettings: [.linkedLibrary("z")]),
        .executableTarget(name: "FuzzAudienceGzip", dependencies: [
            "FuzzSupport", "FuzzZlib", .product(name: "PushlineIO", package: "pushline"),
        ]),
        .executableTarget(name: "FuzzLiquid", dependencies: [
            "FuzzSupport",
            .product(name: "PushlineCore", package: "pushline"),
            .product(name: "PushlineTemplates", package: "pushline"),
        ]),
        .executableTarget(name: "FuzzHandlebars", dependencies: [
            "FuzzSupport",
            .product(name: "PushlineCore", package: "pushline"),
            .product(name: "PushlineTemplates", package: "pushline"),
        ]),
        .executableTarget(name: "FuzzPipeline", dependencies: [
            "FuzzSupport",
            .product(name: "PushlineCore", package: "pushline"),
            .product(name: "PushlineEncoding", package: "pushline"),
            .product(name: "PushlineRuntime", package: "pushline"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
