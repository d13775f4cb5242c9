import PushlineCore
import PushlineEncoding
import PushlineRuntime
import Testing

/// `${VAR}` in `providers:` values (docs/pipeline.md, "Environment variables").
@Suite("Provider variables: ${VAR} in providers values")
struct ProviderVariablesTests {
    static func tree(_ yaml: String) throws -> ConfigNode {
        try PipelineLoader.parse(yaml: yaml, path: "p.yaml")
    }

    static let pipeline = """
    name: x
    notification:
      alert: "costs ${{ price }} or ${HOME}"
    providers:
      apns:
        key_file: ${KEY_DIR}/AuthKey_${KEY_ID}.p8
        key_id: "$${KEY_ID}"
        topic: com.example$app
        connections: ${CONNECTIONS}
        team_id: "a$b$$c"
      fcm: { service_account: "${SA}", project_id: plain }
      sms: { url: "https://hooks.example/${HOOK}" }
    """

    static let environment = ["KEY_DIR": "/keys", "KEY_ID": "ABC123", "CONNECTIONS": "4", "SA": "sa.json", "HOOK": "h1", "HOME": "/root"]

    @Test func expandsEveryProvidersValueAndNothingElse() throws {
        let result = ProviderVariables.expand(try Self.tree(Self.pipeline), environment: Self.environment)
        #expect(result.diagnostics.isEmpty)
        let apns = try #require(result.root["providers"]?["apns"])
        #expect(apns["key_file"]?.stringValue == "/keys/AuthKey_ABC123.p8", "two variables in one value")
        #expect(apns["key_id"]?.stringValue == "${KEY_ID}", "$${ is a literal ${")
        #expect(apns["topic"]?.stringValue == "com.example$app", "a lone $ stays")
        #expect(apns["team_id"]?.stringValue == "a$b$$c", "$$ not followed by { stays")
        #expect(apns["connections"]?.intValue == 4, "an integer property reads the expanded text as YAML's 4")
        #expect(result.root["providers"]?["fcm"]?["service_account"]?.stringValue == "sa.json")
        #expect(result.root["providers"]?["sms"]?["url"]?.stringValue == "https://hooks.example/h1")
        // Templates elsewhere keep their `$` and `${`.
        #expect(result.root["notification"]?["alert"]?.stringValue == "costs ${{ price }} or ${HOME}")
    }

    @Test func positionsAreKept() throws {
        let result = ProviderVariables.expand(try Self.tree(Self.pipeline), environment: Self.environment)
        let node = try #require(result.root["providers"]?["apns"]?["key_file"])
        #expect(node.line == 6 && node.column == 15)
    }

    @Test(arguments: [
        // (value, environment, message): each a diagnostic at providers.apns.key_file, line 3, column 21 (the opening quote).
        ("${MISSING}", [String: String](), "environment variable MISSING is not set"),
        ("/k/${EMPTY}.p8", ["EMPTY": ""], "environment variable EMPTY is empty"),
        ("${OPEN", [:], "'${' is not closed by '}' (write $${ for a literal ${)"),
        ("${1ABC}", ["1ABC": "x"], "'${1ABC}' is not an environment variable name (ASCII letters, digits and _, not starting with a digit; write $${ for a literal ${)"),
        ("${A-B}", [:], "'${A-B}' is not an environment variable name (ASCII letters, digits and _, not starting with a digit; write $${ for a literal ${)"),
        ("${}", [:], "'${}' is not an environment variable name (ASCII letters, digits and _, not starting with a digit; write $${ for a literal ${)"),
        ("${SET}${UNSET}", ["SET": "x"], "environment variable UNSET is not set"),
    ])
    func problemsNameTheVariableAndThePlace(value: String, environment: [String: String], message: String) throws {
        let yaml = "name: x\nproviders:\n  apns: { key_file: \"\(value)\", topic: t }\n"
        let result = ProviderVariables.expand(try Self.tree(yaml), environment: environment)
        #expect(result.diagnostics.map(\.description) == ["3:21: error: providers.apns.key_file: \(message)"])
        #expect(result.failedPaths == ["providers.apns.key_file"])
        #expect(result.root["providers"]?["apns"]?["key_file"]?.stringValue == value, "left as written")
    }

    @Test func unknownKeysAndProvidersAreLeftForTheSchema() throws {
        let yaml = "name: x\nproviders:\n  apns: { keyfile: \"${MISSING}\", topic: t }\n  nope: { a: \"${MISSING}\" }\n"
        let result = ProviderVariables.expand(try Self.tree(yaml), environment: [:])
        #expect(result.diagnostics.isEmpty)
        #expect(result.root["providers"]?["apns"]?["keyfile"]?.stringValue == "${MISSING}")
    }

    @Test func expandedTextIsNotExpandedAgain() throws {
        let yaml = "name: x\nproviders:\n  apns: { key_file: \"${A}\", topic: t }\n"
        let result = ProviderVariables.expand(try Self.tree(yaml), environment: ["A": "${B}", "B": "no"])
        #expect(result.diagnostics.isEmpty)
        #expect(result.root["providers"]?["apns"]?["key_file"]?.stringValue == "${B}")
    }

    @Test func nonNumericTextForAnIntegerStaysAString() throws {
        let yaml = "name: x\nproviders:\n  fcm: { streams: \"${S}\", burst: \"${B}\" }\n"
        let result = ProviderVariables.expand(try Self.tree(yaml), environment: ["S": "lots", "B": "-5"])
        #expect(result.root["providers"]?["fcm"]?["streams"]?.stringValue == "lots")
        #expect(result.root["providers"]?["fcm"]?["burst"]?.stringValue == "-5")
    }
}
