import Foundation

/// A small parser of the Prometheus text exposition format (0.0.4), written apart from the code
/// that writes it: `# TYPE name kind` and `# HELP` comments, and samples
/// `name{label="value",…} value`. Anything else is an error.
struct PrometheusText {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    struct ParseError: Error, CustomStringConvertible {
        var line: Int
        var text: String
        var why: String
        var description: String { "line \(line): \(why): \(text)" }
    }

    var samples: [Sample] = []
    /// Metric family → counter, gauge, histogram, summary or untyped.
    var types: [String: String] = [:]
    /// Metric family → its `# HELP` text (unescaped).
    var help: [String: String] = [:]

    init(_ text: String) throws {
        guard text.isEmpty || text.hasSuffix("\n") else { throw ParseError(line: 0, text: "", why: "no final newline") }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let number = index + 1
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ", maxSplits: 3)
                if words.count >= 2, words[1] == "TYPE" {
                    guard words.count == 4, Self.isName(words[2]),
                          ["counter", "gauge", "histogram", "summary", "untyped"].contains(String(words[3])) else {
                        throw ParseError(line: number, text: String(line), why: "bad TYPE line")
                    }
                    guard types[String(words[2])] == nil else { throw ParseError(line: number, text: String(line), why: "second TYPE line") }
                    types[String(words[2])] = String(words[3])
                } else if words.count >= 3, words[1] == "HELP" {
                    guard Self.isName(words[2]), help[String(words[2])] == nil else { throw ParseError(line: number, text: String(line), why: "bad or second HELP line") }
                    help[String(words[2])] = words.count == 4 ? Self.unescapedHelp(words[3]) : ""
                }
                continue
            }
            samples.append(try Self.sample(Substring(line), number: number))
        }
    }

    static func isName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" || first == ":" else { return false }
        return name.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == ":" }
    }

    /// A HELP text's escapes: `\\` and `\n` (anything else stays as it is).
    static func unescapedHelp(_ text: Substring) -> String {
        var out = ""
        var escaping = false
        for c in text {
            if escaping {
                out.append(c == "n" ? "\n" : c == "\\" ? "\\" : "\\\(c)")
                escaping = false
            } else if c == "\\" {
                escaping = true
            } else {
                out.append(c)
            }
        }
        return out
    }

    static func sample(_ line: Substring, number: Int) throws -> Sample {
        func fail(_ why: String) -> ParseError { ParseError(line: number, text: String(line), why: why) }
        var rest = line[...]
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = rest[..<nameEnd]
        guard isName(name) else { throw fail("bad metric name") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw fail("label without =") }
                let label = rest[..<equals]
                guard isName(label), !label.contains(":") else { throw fail("bad label name") }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw fail("label value not quoted") }
                rest = rest.dropFirst()
                var value = ""
                while true {
                    guard let c = rest.first else { throw fail("unterminated label value") }
                    rest = rest.dropFirst()
                    if c == "\"" { break }
                    if c == "\\" {
                        guard let escaped = rest.first else { throw fail("dangling escape") }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: throw fail("bad escape")
                        }
                    } else {
                        value.append(c)
                    }
                }
                guard labels.updateValue(value, forKey: String(label)) == nil else { throw fail("label twice") }
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { throw fail("expected , or }") }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw fail("no space before the value") }
        let fields = rest.dropFirst().split(separator: " ")
        guard (1...2).contains(fields.count) else { throw fail("expected a value and an optional timestamp") }
        let valueText = String(fields[0])
        let value: Double
        switch valueText {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(valueText) else { throw fail("bad value") }
            value = parsed
        }
        if fields.count == 2, Int64(fields[1]) == nil { throw fail("bad timestamp") }
        return Sample(name: String(name), labels: labels, value: value)
    }

    /// The one sample of `name` with exactly these labels.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matches = samples.filter { $0.name == name && $0.labels == labels }
        return matches.count == 1 ? matches[0].value : nil
    }

    func samples(named name: String) -> [Sample] { samples.filter { $0.name == name } }

    /// The metric family a sample belongs to: a histogram's `_bucket`, `_sum` and `_count` belong
    /// to the histogram.
    func family(of name: String) -> String {
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return name
    }

    /// The same samples without these labels (the run's `campaign` and `shard`, once checked).
    func dropping(_ labels: Set<String>) -> PrometheusText {
        var copy = self
        for i in copy.samples.indices { copy.samples[i].labels = copy.samples[i].labels.filter { !labels.contains($0.key) } }
        return copy
    }
}
