// swift-tools-version: 6.1
import PackageDescription

// Kept out of the main package so building and testing Pushline never compiles the benchmark
// harness. Run from this folder: `swift package benchmark` (see docs/benchmarks.md).
let package = Package(
    name: "pushline-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "pushline", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "JSONBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PushlineCore", package: "pushline"),
            ],
            path: "Benchmarks/JSONBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "TemplateBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PushlineCore", package: "pushline"),
                .product(name: "PushlineTemplates", package: "pushline"),
            ],
            path: "Benchmarks/TemplateBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "EncodingBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PushlineCore", package: "pushline"),
                .product(name: "PushlineTemplates", package: "pushline"),
                .product(name: "PushlineEncoding", package: "pushline"),
                .product(name: "PushlineRuntime", package: "pushline"),
            ],
            path: "Benchmarks/EncodingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The transport alone against a local HTTP/2 server; compared with Benchmarks/curl-loop and
        // h2load by scripts/benchmark-send. A plain executable: it measures a whole run.
        .executableTarget(
            name: "TransportLoop",
            dependencies: [.product(name: "PushlineDelivery", package: "pushline")],
            path: "Benchmarks/TransportLoop"
        ),
    ],
    swiftLanguageModes: [.v6]
)
