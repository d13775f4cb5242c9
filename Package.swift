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
        .executable(name: "pushline-emulator", targets: ["pushline-emulator"]),
        .library(name: "PushlineCore", targets: ["PushlineCore"]),
        .library(name: "PushlineTemplates", targets: ["PushlineTemplates"]),
        .library(name: "PushlineEncoding", targets: ["PushlineEncoding"]),
        .library(name: "PushlineIO", targets: ["PushlineIO"]),
        .library(name: "PushlineDelivery", targets: ["PushlineDelivery"]),
        .library(name: "PushlineRuntime", targets: ["PushlineRuntime"]),
        .library(name: "PushlineEmulator", targets: ["PushlineEmulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Graceful stop: SIGTERM / SIGINT drain the run's stages (docs/output.md, "Stopping a run").
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The provider emulator: HTTP/2 over TLS (ALPN h2) with SwiftNIO, its keys and certificate.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // A range, so the sender's choice of 3.x or 4.x resolves to one copy.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // Observability (docs/observability.md): metrics through swift-metrics, exported as a
        // Prometheus text file. swift-prometheus 2.x needs only swift-atomics, no SwiftNIO.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C shims: typed wrappers for the macro and variadic C APIs, nothing else.
        .target(name: "CZlib", linkerSettings: [.linkedLibrary("z")]),
        // ISA-L's igzip: inflates the audience about 1.7x as fast as zlib on this data.
        .target(name: "CIsal", linkerSettings: [.linkedLibrary("isal")]),
        .target(name: "CPushlineIO"),
        .target(name: "CPushlineRuntime"),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // The HTTP/2 engine's C side: nghttp2 and OpenSSL (Debian's libnghttp2-dev, libssl-dev).
        .target(name: "CNGHTTP2", linkerSettings: [.linkedLibrary("nghttp2"), .linkedLibrary("ssl"), .linkedLibrary("crypto")]),

        // Pure core: no I/O, no dependencies.
        .target(name: "PushlineCore", swiftSettings: strict),
        .target(name: "PushlineTemplates", dependencies: ["PushlineCore"], swiftSettings: strict),
        .target(name: "PushlineEncoding", dependencies: ["PushlineCore", "PushlineTemplates"], swiftSettings: strict),

        // I/O.
        .target(name: "PushlineIO", dependencies: ["PushlineCore", "CZlib", "CIsal", "CPushlineIO"], swiftSettings: strict),
        // Delivery: HTTP/2 transport on libcurl multi (Transport/), provider auth (APNs JWT, FCM
        // OAuth), rate and retry policy, response classification (docs/delivery.md). The policy
        // parts are pure values driven by an injected clock.
        .target(
            name: "PushlineDelivery",
            dependencies: [
                "PushlineCore", "CCurl", "CNGHTTP2",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PushlineRuntime",
            dependencies: [
                "PushlineCore", "PushlineTemplates", "PushlineEncoding", "PushlineIO", "PushlineDelivery", "CCurl", "CPushlineRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Checkpoints: SHA-256 of the journal, the pipeline and the audience's ends.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // A local APNs / FCM v1 / OAuth server with fault injection, for tests and `pushline-emulator`.
        .target(
            name: "PushlineEmulator",
            dependencies: [
                "PushlineCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strict
        ),
        // What both executables share: checked writes to standard output and error, and how a
        // root command is run (one `<program>: error:` line and an exit code for every failure).
        .target(
            name: "PushlineCommandLine",
            dependencies: ["PushlineCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "pushline",
            dependencies: [
                "PushlineRuntime", "PushlineCommandLine", "PushlineIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The emulator's own executable, so that building `pushline` compiles no SwiftNIO,
        // nio-ssl (a second BoringSSL), nio-http2 or swift-certificates.
        .executableTarget(
            name: "pushline-emulator",
            dependencies: ["PushlineEmulator", "PushlineCommandLine", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),

        // Tests mirror the modules; PushlineTestSupport holds what several of them share.
        .target(name: "PushlineTestSupport", dependencies: ["PushlineCore", "CPushlineTestSupport"], path: "Tests/PushlineTestSupport", swiftSettings: strict),
        // Starting and waiting for child processes without Foundation's Process (see ChildProcess.swift).
        .target(name: "CPushlineTestSupport", path: "Tests/CPushlineTestSupport"),
        // An HTTP/2 server that misbehaves on purpose and counts what it receives (transport tests).
        .target(
            name: "PushlineHostileServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // `Watched`: tests wait on the counts instead of polling them.
                "PushlineEmulator",
            ],
            path: "Tests/PushlineHostileServer",
            swiftSettings: strict
        ),
        .testTarget(name: "PushlineCoreTests", dependencies: ["PushlineCore", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "PushlineTemplatesTests", dependencies: ["PushlineTemplates", "PushlineTestSupport"], exclude: ["Resources"], swiftSettings: strict),
        .testTarget(name: "PushlineEncodingTests", dependencies: ["PushlineEncoding", "PushlineRuntime", "PushlineDelivery", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(name: "PushlineIOTests", dependencies: ["PushlineIO", "PushlineTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "PushlineDeliveryTests",
            dependencies: [
                "PushlineDelivery", "PushlineCore", "PushlineTestSupport", "PushlineEmulator", "PushlineHostileServer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineRuntimeTests",
            dependencies: [
                "PushlineRuntime", "PushlineDelivery", "PushlineEmulator", "PushlineTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PushlineEmulatorTests",
            dependencies: [
                "PushlineEmulator", "PushlineTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
