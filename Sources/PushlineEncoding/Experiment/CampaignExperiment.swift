import PushlineCore

/// Compiles a pipeline with `experiment:`: the campaign as written (its notification must be
/// valid on its own), then each variant as the pipeline whose notification is the campaign's
/// with the variant's merged over it (`merged(_:over:)`), once per variant. The campaign's route
/// table holds every variant's routes, each tagged with its variant; templates compile once per
/// variant.
enum CampaignExperiment {
    static func compile(
        _ root: ConfigNode, experiment: ConfigNode, now: Int, serviceAccountProject: String?,
        single: (ConfigNode) throws(CampaignCompileError) -> Campaign
    ) throws(CampaignCompileError) -> Campaign {
        var diagnostics: [ConfigDiagnostic] = []
        var base: Campaign?
        do throws(CampaignCompileError) {
            base = try single(root)
        } catch {
            diagnostics = error.diagnostics
        }
        // The experiment's shape is checked with the pipeline's schema; a variant with an error
        // there is not compiled (the others are, so one `validate` lists every problem).
        let shapeErrors = diagnostics.filter { $0.severity == .error }.map(\.path)
        let baseWarnings = base?.warnings ?? []
        let known = Set(diagnostics + baseWarnings)
        // Without a notification (the schema said so) there is nothing to merge variants over.
        guard let notification = root["notification"] else { throw CampaignCompileError(diagnostics: diagnostics) }
        let variantNodes = experiment["variants"]?.sequenceElements ?? []
        var variants: [(split: ExperimentSplit.Variant, routes: CampaignRoutes, templateSlots: Int)] = []
        for (index, node) in variantNodes.enumerated() {
            let name = node["name"]?.stringValue ?? ""
            let weight = node["weight"]?.numberValue ?? 1
            let override = node["notification"]
            var variantRoot = root
            variantRoot.replaceMember("notification", with: merged(override, over: notification))
            variantRoot.removeMember("experiment")
            let place = ConfigPath("experiment").appending("variants").appending(index: index)
            let prefix = place.description
            guard !shapeErrors.contains(where: { $0 == prefix || $0.hasPrefix(prefix + ".") }) else { continue }
            let positions = override.map(Self.positions) ?? []
            do throws(CampaignCompileError) {
                let compiled = try single(variantRoot)
                variants.append((.init(name: name, weight: weight), compiled.routes, compiled.templateSlots))
                diagnostics += compiled.warnings.compactMap { attribute($0, positions: positions, place: place, known: known) }
            } catch {
                diagnostics += error.diagnostics.compactMap { attribute($0, positions: positions, place: place, known: known) }
            }
        }
        guard var campaign = base, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw CampaignCompileError(diagnostics: diagnostics)
        }
        let control: Double
        switch ExperimentSchema.controlShare(experiment["control"] ?? ConfigNode(.string("0%"))) {
        case .success(let share): control = share
        case .failure(let problem): throw CampaignCompileError(diagnostics: [ConfigDiagnostic(.error, path: ConfigPath("experiment.control"), problem.description, at: experiment["control"])])
        }
        var routes = CampaignRoutes()
        for (index, variant) in variants.enumerated() {
            routes.appendVariant(variant.routes, index: index, name: variant.split.name)
        }
        campaign.routes = routes
        campaign.templateSlots = variants.map(\.templateSlots).max() ?? campaign.templateSlots
        campaign.warnings = baseWarnings + diagnostics.filter { $0.severity == .warning }
        campaign.experiment = ExperimentSplit(id: experiment["id"]?.stringValue ?? "", control: control, variants: variants.map(\.split))
        return campaign
    }

    /// `override` merged over `base`, key by key: mappings merge recursively (the override's
    /// keys win, the base's others stay, in the base's order then the override's new keys);
    /// anything else (a string, a list) is replaced whole. An explicit null in the override
    /// removes the key.
    static func merged(_ override: ConfigNode?, over base: ConfigNode) -> ConfigNode {
        guard let override else { return base }
        guard let overrides = override.mappingEntries, let entries = base.mappingEntries else { return override }
        let removed = Set(overrides.filter { $0.node.isNull }.map(\.key))
        var result = entries.filter { !removed.contains($0.key) }
        for (key, node) in overrides where !node.isNull {
            if let i = result.firstIndex(where: { $0.key == key }) {
                result[i].node = merged(node, over: result[i].node)
            } else {
                result.append((key, node))
            }
        }
        var node = base
        node.value = .mapping(result)
        return node
    }

    /// Every source position in `node`'s tree: a diagnostic at one of them is about the
    /// variant's own text.
    static func positions(_ node: ConfigNode) -> Set<Position> {
        var found: Set<Position> = []
        func walk(_ node: ConfigNode) {
            if node.line > 0 { found.insert(Position(line: node.line, column: node.column)) }
            switch node.value {
            case .sequence(let elements): elements.forEach(walk)
            case .mapping(let entries): entries.forEach { walk($0.node) }
            default: break
            }
        }
        walk(node)
        return found
    }

    struct Position: Hashable {
        var line: Int
        var column: Int
    }

    /// A variant's diagnostic as the user should read it: about the variant's own text, under
    /// `experiment.variants[i].notification…`; about the campaign's text only in this variant's
    /// merge, with the variant named; nil when the campaign's compilation said it already.
    static func attribute(_ diagnostic: ConfigDiagnostic, positions: Set<Position>, place: ConfigPath, known: Set<ConfigDiagnostic>) -> ConfigDiagnostic? {
        var d = diagnostic
        if positions.contains(Position(line: d.line, column: d.column)), d.path.hasPrefix("notification") {
            d.path = place.description + "." + d.path
            return d
        }
        guard !known.contains(d) else { return nil }
        d.message += " (with the notification of \(place.description))"
        return d
    }
}

extension ConfigNode {
    /// Sets mapping member `key`: its (last) entry takes `node`, at the first entry's place.
    mutating func replaceMember(_ key: String, with node: ConfigNode) {
        guard case .mapping(var entries) = value else { return }
        let first = entries.firstIndex { $0.key == key }
        entries.removeAll { $0.key == key }
        entries.insert((key, node), at: Swift.min(first ?? entries.count, entries.count))
        value = .mapping(entries)
    }

    mutating func removeMember(_ key: String) {
        guard case .mapping(var entries) = value else { return }
        entries.removeAll { $0.key == key }
        value = .mapping(entries)
    }
}
