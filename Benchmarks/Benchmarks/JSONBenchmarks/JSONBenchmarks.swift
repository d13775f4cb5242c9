import Benchmark
import PushlineCore

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))

    Benchmark("JSON placeholder") { benchmark in
        var writer = JSONWriter()
        for _ in benchmark.scaledIterations {
            writer.removeAll()
            writer.writeString("x")
            blackHole(writer.count)
        }
    }
}
