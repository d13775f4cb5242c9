import Benchmark
import PushlineCore
import PushlineTemplates

/// Handlebars render throughput and allocations per render, on one audience-like record.
/// Call from the `benchmarks` closure in TemplateBenchmarks.swift.
///
/// Targets: the two-variable title ≥ 2,000,000 renders/s on one thread with 0 mallocs per render.
func handlebarsBenchmarks() {
    let record: JSONValue
    let title: any CompiledTemplate
    let body: any CompiledTemplate
    do {
        record = try JSONDocument(parsing: #"""
            {"id":"c-42","customer":{"first_name":"Ana","last_name":"Lima","points":120,"tier":"gold"},
             "event":{"event_title":"Lisbon trip","price":19.90},
             "devices":[{"platform":"ios","token":"7c1f0e3a"}]}
            """#).root
        title = try TemplateCompiler.compile(
            "Hi {{customer.first_name}}, your {{event.event_title}}", dialect: .handlebars)
        body = try TemplateCompiler.compile(
            "{{#if customer.points}}You have {{customer.points}} points. {{/if}}"
                + "{{upper customer.tier}} members get {{event.event_title}} first.",
            dialect: .handlebars)
    } catch {
        fatalError("benchmark setup: \(error)")
    }
    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(2))

    Benchmark("Handlebars title, two variables", configuration: configuration) { benchmark in
        var output = RenderOutput(mode: .jsonStringContent, limit: 8192, reservingCapacity: 512)
        for _ in benchmark.scaledIterations {
            output.removeAll()
            try title.render(record: record, into: &output)
            blackHole(output.textCount)
        }
    }

    Benchmark("Handlebars body, one helper and one #if", configuration: configuration) { benchmark in
        var output = RenderOutput(mode: .jsonStringContent, limit: 8192, reservingCapacity: 512)
        for _ in benchmark.scaledIterations {
            output.removeAll()
            try body.render(record: record, into: &output)
            blackHole(output.textCount)
        }
    }
}
