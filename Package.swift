// swift-tools-version: 6.1
import PackageDescription

// Module layout follows the data flow (see docs/architecture.md):
// C shims → Core (bytes, JSON, records, config tree) → Templates → Encoding → IO → Runtime → CLI.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    // The hot path crosses modules (reader → templates → encoders); full cross-module
    // optimization lets generics such as `withUnescapedString` specialize across them
    // (measured: docs/benchmarks.md).
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "pushline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pushline", targets: ["pushline"]),
        .library(name: "PushlineCore", targets: ["PushlineCore"]),
        .library(name: "PushlineTemplates", targets: ["PushlineTemplates"]),
        .library(name: "PushlineEncoding", targets: ["PushlineEncoding"]),
        .library(name: "PushlineIO", targets: ["PushlineIO"]),
        .library(name: "PushlineDelivery", targets: ["PushlineDelivery"]),
        .library(name: "PushlineRuntime", targets: ["PushlineRuntime"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Either major works (3.12.3 or 4.5.2 on this machine): the APIs used (P256, _RSA) are in both.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // C shims: typed wrappers for the macro and variadic C APIs, nothing else.
        .target(name: "CZlib", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),

        // Pure core: no I/O, no dependencies.
        .target(name: "PushlineCore", swiftSettings: strict),
        .target(name: "PushlineTemplates", dependencies: ["PushlineCore"], swiftSettings: strict),
        .target(name: "PushlineEncoding", dependencies: ["PushlineCore", "PushlineTemplates"], swiftSettings: strict),

        // I/O.
        .target(name: "PushlineIO", dependencies: ["PushlineCore", "CZlib"], swiftSettings: strict),
        // Delivery: HTTP/2 transport on libcurl multi (Transport/), provider auth (APNs JWT, FCM
        // OAuth), rate and retry policy, response classification (docs/delivery.md). The policy
        // parts are pure values driven by an injected clock.
        .target(
            name: "PushlineDelivery",
            dependencies: [
                "PushlineCore", "CCurl",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PushlineRuntime",
            dependencies: [
                "PushlineCore", "PushlineTemplates", "PushlineEncoding", "PushlineIO", "CCurl",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "pushline",
            dependencies: [
                "PushlineRuntime", "PushlineCore", "PushlineTemplates", "PushlineEncoding", "PushlineIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // Tests mirror the modules; PushlineTestSupport holds what several of them share.
        .target(name: "PushlineTestSupport", dependencies: ["PushlineCore"], path: "Tests/PushlineTestSupport", swiftSettings: strict),
        .testTarget(name: "PushlineCoreTests", dependencies: ["PushlineCore", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "PushlineTemplatesTests", dependencies: ["PushlineTemplates", "PushlineTestSupport"], exclude: ["Resources"], swiftSettings: strict),
        .testTarget(name: "PushlineEncodingTests", dependencies: ["PushlineEncoding", "PushlineRuntime", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "PushlineIOTests", dependencies: ["PushlineIO", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "PushlineDeliveryTests",
            dependencies: [
                "PushlineDelivery", "PushlineCore", "PushlineTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(name: "PushlineRuntimeTests", dependencies: ["PushlineRuntime", "PushlineTestSupport"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
