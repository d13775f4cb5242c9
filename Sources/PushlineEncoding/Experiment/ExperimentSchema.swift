import PushlineCore

/// `experiment:` in the pipeline file (docs/pipeline.md, "Experiments"): its id, the holdout's
/// share and 2 to 26 weighted variants, each with a notification merged over the campaign's.
/// A variant's notification is checked as the merged notification it makes
/// (`CampaignExperiment`); here only its shape.
enum ExperimentSchema {
    static let maxVariants = 26
    static let maxWeight = 1_000_000.0
    static let maxIDBytes = 128
    static let maxNameBytes = 32

    static let variant = ObjectSchema("an experiment variant", [
        SchemaProperty("name", .string(.constant), required: true),
        SchemaProperty("weight", .number(0...maxWeight), default: .int(1)),
        SchemaProperty("notification", .jsonMap()),
    ], rules: [variantRule])

    static let object = ObjectSchema("experiment", [
        // The assignment's salt: the same id gives the same split.
        SchemaProperty("id", .string(.constant), required: true),
        // The holdout, as a percentage: `10%`.
        SchemaProperty("control", .oneOf([.string(.constant), .number()]), default: .string("0%")),
        SchemaProperty("variants", .array(.object(variant), maxCount: maxVariants), required: true),
    ], rules: [experimentRule])

    /// A weight of 0 is in the number range (so the message is this one, not a range's).
    static let variantRule: SchemaRule = { node, path, log, _ in
        if let weight = node["weight"], let value = weight.numberValue, value == 0 {
            log.error(path / "weight", "must be greater than 0 (a variant nobody gets is no variant: remove it)", at: weight)
        } else if let weight = node["weight"], let text = weight.stringValue, isTemplated(text) {
            // The number type lets notification fields be personalized; a weight cannot be.
            log.error(path / "weight", "cannot be personalized (it decides the split): expected a number", at: weight)
        }
        if let name = node["name"], let text = name.stringValue, !isVariantName(text) {
            log.error(path / "name", "expected 1 to \(maxNameBytes) ASCII letters, digits, '_' or '-', found '\(PrintableName.bounded(text, limit: 60))'", at: name)
        } else if let name = node["name"], name.stringValue == ExperimentSplit.controlName {
            log.error(path / "name", "'\(ExperimentSplit.controlName)' names the holdout: give the variant another name", at: name)
        }
    }

    static let experimentRule: SchemaRule = { node, path, log, _ in
        if let id = node["id"], let text = id.stringValue {
            if text.isEmpty || text.utf8.count > maxIDBytes || text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                log.error(path / "id", "expected 1 to \(maxIDBytes) bytes without control characters, found '\(PrintableName.bounded(text, limit: 60))'", at: id)
            }
        }
        if let control = node["control"], control.stringValue.map(isTemplated) != true {
            if case .failure(let problem) = controlShare(control) { log.error(path / "control", problem.description, at: control) }
        }
        guard let variants = node["variants"]?.sequenceElements else { return }
        if variants.count < 2 {
            log.error(path / "variants", "has \(variants.count) variant\(variants.count == 1 ? "" : "s"), at least 2 needed (the holdout is `control:`, not a variant)", at: node["variants"])
        }
        var seen: [String: Int] = [:]
        for (i, variant) in variants.enumerated() {
            guard let name = variant["name"], let text = name.stringValue else { continue }
            if let first = seen[text] {
                log.error((path / "variants").appending(index: i) / "name", "'\(PrintableName.bounded(text, limit: 60))' is also the name of variants[\(first)]: names must be unique", at: name)
            } else {
                seen[text] = i
            }
        }
    }

    /// `10%`, `2.5%`, `0%`: the holdout's share in [0, 1).
    static func controlShare(_ node: ConfigNode) -> Result<Double, ExperimentProblem> {
        guard let text = node.stringValue else {
            let shown = node.numberValue.map { "\($0)" } ?? node.kindName
            return .failure(ExperimentProblem("expected a percentage such as 10%, found \(shown) (write the % sign: 0.1 is ambiguous)"))
        }
        let digits = text.hasSuffix("%") ? String(text.dropLast()).trimmingSpaces : ""
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }),
              digits.utf8.count <= 12, let percent = Double(digits), percent.isFinite else {
            return .failure(ExperimentProblem("expected a percentage such as 10%, found '\(PrintableName.bounded(text, limit: 40))'"))
        }
        guard percent < 100 else {
            return .failure(ExperimentProblem("\(digits)% holds out every recipient: expected less than 100%"))
        }
        return .success(percent / 100)
    }

    static func isVariantName(_ text: String) -> Bool {
        (1...maxNameBytes).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            PipelineSchema.isASCIIAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

struct ExperimentProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
