import Benchmark
import PushlineCore
import PushlineTemplates

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2))
    liquidBenchmarks()
    handlebarsBenchmarks()
}

/// One audience line, parsed once: renders read it through the lazy JSON index.
private let liquidRecord: JSONValue = {
    let line = #"{"id":"c-42","customer":{"first_name":"Ana","points":120,"tier":"gold"},"event":{"event_title":"Lisbon trip"},"devices":[{"platform":"ios","token":"abc"}]}"#
    return try! JSONDocument(parsing: line).root
}()

func liquidBenchmarks() {
    // A thousand renders per sample, so the harness's per-sample cost does not swamp a sub-microsecond render.
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2))

    // (a) The common push title: text and two lookups, expected to allocate nothing.
    Benchmark("Liquid two-variable title", configuration: configuration) { benchmark in
        let template = try TemplateCompiler.compile(
            "Hi {{ customer.first_name }}, your {{ event.event_title }} is waiting", dialect: .liquid)
        var output = RenderOutput(mode: .jsonStringContent, limit: 8192, reservingCapacity: 256)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            output.removeAll()
            try template.render(record: liquidRecord, into: &output)
            blackHole(output.textCount)
        }
    }

    // (b) A body with one filter and one `if`.
    Benchmark("Liquid body with filter and if", configuration: configuration) { benchmark in
        let template = try TemplateCompiler.compile(
            "{{ customer.first_name | default: 'there' }}, {% if customer.points > 100 %}you have {{ customer.points }} points{% else %}keep going{% endif %}!",
            dialect: .liquid)
        var output = RenderOutput(mode: .jsonStringContent, limit: 8192, reservingCapacity: 256)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            output.removeAll()
            try template.render(record: liquidRecord, into: &output)
            blackHole(output.textCount)
        }
    }
}
