import Foundation
import PushlineCore
@testable import PushlineRuntime
import PushlineTestSupport
import Testing

/// The scheduler files in pipelines/deploy/ only use `pushline run` options that exist, run as many
/// shards as their arrays have tasks, name files of this repository that exist, and retry exactly
/// what pushline's exit codes say is worth retrying (docs/shards.md, "On a scheduler";
/// docs/exit-codes.md). scripts/slurm-check runs the Slurm file under a real Slurm.
@Suite("Shards: the deploy manifests", .enabled(if: PushlineBinary.exists, "needs .build/debug/pushline (swift build --build-tests)"))
struct DeployManifestTests {
    static let folder = PushlineBinary.root.appendingPathComponent("pipelines/deploy").path
    static let files = ["kubernetes-indexed-job.yaml", "aws-batch-job-definition.json", "slurm-array.sh"]

    /// What a scheduler should do with each exit code of `pushline run` (docs/exit-codes.md).
    /// Retried (and resumed by --auto-resume): a stop by SIGTERM, an output error such as a full
    /// disk, a SIGKILL (137). Never retried: the configuration or usage errors, and the finished
    /// runs (a retry would send nothing and exit the same).
    static let retried: [Int] = [5, 6, 137]
    static let configurationErrors: [Int] = [1, 2, 8, 9, 12, 13, 64]
    static let finished: [Int] = [3, 4, 7]

    static func text(_ name: String) throws -> String {
        try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
    }

    /// The Kubernetes manifest as Foundation values, read by the pipeline loader's own YAML reader.
    static func kubernetes() throws -> [String: Any] {
        let node = try #require(try YAMLComposer.compose(Array(try text("kubernetes-indexed-job.yaml").utf8), limits: .standard))
        return try #require(foundation(node) as? [String: Any])
    }

    static func foundation(_ node: ConfigNode) -> Any {
        switch node.value {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .sequence(let items): items.map(foundation)
        case .mapping(let entries): Dictionary(entries.map { ($0.key, foundation($0.node)) }, uniquingKeysWith: { $1 })
        }
    }

    static func batch() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text("aws-batch-job-definition.json").utf8)) as? [String: Any])
    }

    /// The `--name` tokens of the `pushline run` invocation in `file`.
    static func runOptions(_ file: String) throws -> Set<String> {
        let text = try Self.text(file)
        let invocation: String
        switch file {
        case "kubernetes-indexed-job.yaml":
            // The container's `args:` list items.
            invocation = text.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- --") }.joined(separator: " ")
        case "aws-batch-job-definition.json":
            let command = try #require((try batch()["containerProperties"] as? [String: Any])?["command"] as? [String])
            invocation = try #require(command.last?.components(separatedBy: "pushline run").last)
        default:
            // From `exec "$pushline" run` to the end of its continued lines.
            let lines = text.split(separator: "\n").drop { !$0.hasPrefix("exec ") }
            var taken: [Substring] = []
            for line in lines {
                taken.append(line)
                if !line.hasSuffix("\\") { break }
            }
            invocation = taken.joined(separator: " ")
        }
        var options = Set<String>()
        let spaced = invocation.replacingOccurrences(of: "=", with: " ").replacingOccurrences(of: "\"", with: " ")
        for token in spaced.split(whereSeparator: { $0 == " " || $0 == "\n" }) where token.hasPrefix("--") && token.count > 2 {
            options.insert(String(token))
        }
        return options
    }

    /// The value of `--drain-timeout` in `file`'s invocation.
    static func drainTimeout(_ file: String) throws -> Int {
        let text = try Self.text(file)
        let match = try #require(text.firstMatch(of: /--drain-timeout[= ]([0-9]+)/), "\(file) sets --drain-timeout")
        return try #require(Int(match.1))
    }

    @Test(arguments: files)
    func usesOnlyOptionsPushlineRunHas(file: String) async throws {
        let help = try await PushlineBinary.run(["run", "--help"]).stdout
        let ours = try Self.runOptions(file)
        #expect(ours.isSuperset(of: ["--shard-count", "--output", "--audience", "--auto-resume", "--drain-timeout"]), "\(ours)")
        for option in ours {
            #expect(help.contains(option + " "), "\(file) uses \(option), which pushline run does not have")
        }
    }

    @Test func eachArrayRunsAsManyShardsAsItHasTasks() throws {
        let kubernetes = try Self.text("kubernetes-indexed-job.yaml")
        #expect(kubernetes.contains("completions: 8") && kubernetes.contains("--shard-count=8"))
        let parameters = try #require(try Self.batch()["parameters"] as? [String: String])
        #expect(parameters["shards"] == "8")
        // AWS Batch's array size is given at submission: docs/shards.md says how.
        let shards = try String(contentsOfFile: PushlineBinary.root.appendingPathComponent("docs/shards.md").path, encoding: .utf8)
        #expect(shards.contains("--array-properties size=8"))
        // Slurm: the shard count is the array's size, unless PUSHLINE_SHARDS says otherwise.
        let slurm = try Self.text("slurm-array.sh")
        #expect(slurm.contains("#SBATCH --array=0-7"))
        #expect(slurm.contains("shards=${PUSHLINE_SHARDS:-${SLURM_ARRAY_TASK_COUNT:"))
        #expect(slurm.contains("--shard-count \"$shards\""))
    }

    /// Every path of this repository a deploy file names (`pipelines/winback.yaml`, `docs/…`)
    /// exists, and each names the campaign it runs.
    @Test(arguments: files)
    func theRepositoryFilesItNamesExist(file: String) throws {
        let text = try Self.text(file)
        // A relative path starting at one of the repository's top folders, not part of a longer
        // absolute path such as /shared/campaigns/pipelines/winback.yaml.
        let paths = text.matches(of: /(?:^|[^\w.\/-])((?:pipelines|docs|scripts|Sources|Tests)\/[\w.\/-]*\w)/).map { String($0.output.1) }
        #expect(paths.contains("pipelines/winback.yaml"), "\(file) names the campaign it runs: \(paths)")
        for path in paths {
            #expect(FileManager.default.fileExists(atPath: PushlineBinary.root.appendingPathComponent(path).path), "\(file) names \(path), which does not exist")
        }
    }

    /// The campaign the files run is a valid pipeline once its credentials are there.
    @Test func theCampaignTheyRunIsValid() throws {
        let scratch = try Scratch()
        let key = scratch.file("AuthKey.p8")
        let account = scratch.file("fcm.json")
        for (command, path) in [("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out \"$0\"", key),
                                ("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out \"$0\"", account + ".pem")] {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command + " 2>/dev/null", path]
            try process.run()
            try #require(process.waitForExit().shellStatus == 0, "openssl")
        }
        let serviceAccount: [String: String] = [
            "type": "service_account", "project_id": "pushline-test", "private_key_id": String(repeating: "0", count: 40),
            "private_key": try String(contentsOfFile: account + ".pem", encoding: .utf8),
            "client_email": "pushline@pushline-test.iam.gserviceaccount.com", "token_uri": "https://oauth2.googleapis.com/token",
        ]
        try JSONSerialization.data(withJSONObject: serviceAccount).write(to: URL(fileURLWithPath: account))
        let pipeline = PushlineBinary.root.appendingPathComponent("pipelines/winback.yaml").path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: PushlineBinary.path)
        process.arguments = ["validate", pipeline]
        process.environment = ProcessInfo.processInfo.environment.merging(["APNS_KEY_FILE": key, "FCM_SERVICE_ACCOUNT": account]) { $1 }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.waitForExit().shellStatus == 0, "\(stderr)")
    }

    // MARK: Kubernetes

    /// The podFailurePolicy's action for a pod whose container exited `code` (rules in order, the
    /// first match wins; no match: `Count`, the default), or for a disrupted pod.
    static func kubernetesAction(exitCode code: Int?, disrupted: Bool, rules: [[String: Any]]) -> String {
        for rule in rules {
            if let onExitCodes = rule["onExitCodes"] as? [String: Any], let code, code != 0 {
                let values = (onExitCodes["values"] as? [Int]) ?? []
                let contains = values.contains(code)
                if (onExitCodes["operator"] as? String == "In") == contains { return rule["action"] as? String ?? "?" }
            }
            if let conditions = rule["onPodConditions"] as? [[String: Any]], disrupted,
               conditions.contains(where: { $0["type"] as? String == "DisruptionTarget" && ($0["status"] as? String ?? "True") == "True" }) {
                return rule["action"] as? String ?? "?"
            }
        }
        return "Count"
    }

    @Test func kubernetesRetriesOnlyWhatResumes() throws {
        let job = try Self.kubernetes()
        let spec = try #require(job["spec"] as? [String: Any])
        let policy = try #require(spec["podFailurePolicy"] as? [String: Any])
        let rules = try #require(policy["rules"] as? [[String: Any]])
        #expect(spec["podReplacementPolicy"] as? String == "Failed")
        #expect((spec["backoffLimitPerIndex"] as? Int ?? 0) >= 1)
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        #expect(pod["restartPolicy"] as? String == "Never", "podFailurePolicy needs restartPolicy Never")
        let grace = try #require(pod["terminationGracePeriodSeconds"] as? Int)
        #expect(grace > (try Self.drainTimeout("kubernetes-indexed-job.yaml")), "the grace period outlasts the drain")
        let container = try #require((pod["containers"] as? [[String: Any]])?.first?["name"] as? String)

        for rule in rules {
            #expect(["FailJob", "FailIndex", "Ignore", "Count"].contains(rule["action"] as? String ?? ""), "\(rule)")
            #expect((rule["onExitCodes"] == nil) != (rule["onPodConditions"] == nil), "one requirement per rule: \(rule)")
            if let onExitCodes = rule["onExitCodes"] as? [String: Any] {
                let values = try #require(onExitCodes["values"] as? [Int])
                #expect(values == Array(Set(values)).sorted() && !values.isEmpty && !values.contains(0), "values sorted, unique, no 0: \(values)")
                #expect(onExitCodes["containerName"] as? String == container)
                #expect(["In", "NotIn"].contains(onExitCodes["operator"] as? String ?? ""))
            }
        }
        for code in Self.retried {
            #expect(["Count", "Ignore"].contains(Self.kubernetesAction(exitCode: code, disrupted: false, rules: rules)), "exit \(code) is retried")
        }
        for code in Self.configurationErrors + Self.finished {
            #expect(Self.kubernetesAction(exitCode: code, disrupted: false, rules: rules) == "FailIndex", "exit \(code) fails the index, not retried")
        }
        // An evicted or preempted pod drains and exits 6, or is killed: retried without counting.
        #expect(Self.kubernetesAction(exitCode: 6, disrupted: true, rules: rules) == "Ignore")
        #expect(Self.kubernetesAction(exitCode: 137, disrupted: true, rules: rules) == "Ignore")
        #expect(Self.kubernetesAction(exitCode: nil, disrupted: true, rules: rules) == "Ignore")
    }

    // MARK: AWS Batch

    /// The keys RegisterJobDefinition takes (AWS Batch API reference: RegisterJobDefinition,
    /// ContainerProperties, RetryStrategy, EvaluateOnExit, …), for the structures the file uses.
    /// `*` : a map of the user's own keys (parameters, tags).
    static let batchKeys: [String: Set<String>] = [
        "": ["jobDefinitionName", "type", "parameters", "schedulingPriority", "containerProperties", "nodeProperties", "retryStrategy",
             "propagateTags", "timeout", "tags", "platformCapabilities", "eksProperties", "ecsProperties", "consumableResourceProperties"],
        "parameters": ["*"],
        "tags": ["*"],
        "retryStrategy": ["attempts", "evaluateOnExit"],
        "retryStrategy.evaluateOnExit": ["action", "onExitCode", "onReason", "onStatusReason"],
        "timeout": ["attemptDurationSeconds"],
        "containerProperties": ["command", "enableExecuteCommand", "environment", "ephemeralStorage", "executionRoleArn",
                                "fargatePlatformConfiguration", "image", "instanceType", "jobRoleArn", "linuxParameters", "logConfiguration",
                                "memory", "mountPoints", "networkConfiguration", "privileged", "readonlyRootFilesystem", "repositoryCredentials",
                                "resourceRequirements", "runtimePlatform", "secrets", "ulimits", "user", "vcpus", "volumes"],
        "containerProperties.resourceRequirements": ["type", "value"],
        "containerProperties.environment": ["name", "value"],
        "containerProperties.secrets": ["name", "valueFrom"],
        "containerProperties.volumes": ["name", "host", "efsVolumeConfiguration"],
        "containerProperties.volumes.efsVolumeConfiguration": ["fileSystemId", "rootDirectory", "transitEncryption", "transitEncryptionPort",
                                                              "authorizationConfig"],
        "containerProperties.mountPoints": ["containerPath", "readOnly", "sourceVolume"],
    ]

    /// Every key of `value` at `path` against `batchKeys`; objects in arrays share their array's path.
    static func unknownBatchKeys(_ value: Any, path: String) -> [String] {
        if let array = value as? [Any] { return array.flatMap { unknownBatchKeys($0, path: path) } }
        guard let object = value as? [String: Any] else { return [] }
        guard let allowed = batchKeys[path] else { return ["\(path): an object the test does not know"] }
        if allowed == ["*"] { return [] }
        return object.flatMap { key, nested -> [String] in
            let nestedPath = path.isEmpty ? key : path + "." + key
            guard allowed.contains(key) else { return [nestedPath] }
            return unknownBatchKeys(nested, path: nestedPath)
        }
    }

    /// AWS Batch's action for a job attempt that exited `code`: the first rule whose patterns all
    /// match (onExitCode: digits, optionally ending with `*` for a prefix), RETRY when none does.
    static func batchAction(exitCode code: Int, rules: [[String: String]]) -> String {
        func matches(_ pattern: String, _ text: String) -> Bool {
            pattern.hasSuffix("*") ? text.hasPrefix(pattern.dropLast()) : text == pattern
        }
        for rule in rules where rule["onStatusReason"] == nil && rule["onReason"] == nil {
            if let pattern = rule["onExitCode"], matches(pattern, String(code)) { return rule["action"]?.uppercased() ?? "?" }
        }
        return "RETRY"
    }

    @Test func awsBatchIsValidRegisterJobDefinitionInputAndRetriesOnlyWhatResumes() throws {
        let definition = try Self.batch()
        #expect(Self.unknownBatchKeys(definition, path: "").isEmpty, "unknown keys: \(Self.unknownBatchKeys(definition, path: ""))")
        let strategy = try #require(definition["retryStrategy"] as? [String: Any])
        let attempts = try #require(strategy["attempts"] as? Int)
        #expect((2...10).contains(attempts))
        let rules = try #require(strategy["evaluateOnExit"] as? [[String: String]])
        #expect((1...5).contains(rules.count), "Batch takes at most 5 rules")
        for rule in rules {
            #expect(["RETRY", "EXIT"].contains(rule["action"]?.uppercased() ?? ""), "\(rule)")
            if let pattern = rule["onExitCode"] {
                #expect(pattern.wholeMatch(of: /[0-9]*\*?/) != nil && !pattern.isEmpty, "onExitCode holds digits and may end with *: \(pattern)")
            }
        }
        #expect(rules.last == ["onExitCode": "*", "action": "EXIT"], "anything else exits: without it Batch retries every other code")
        for code in Self.retried {
            #expect(Self.batchAction(exitCode: code, rules: rules) == "RETRY", "exit \(code) is retried")
        }
        for code in Self.configurationErrors + Self.finished + [0] {
            #expect(Self.batchAction(exitCode: code, rules: rules) == "EXIT", "exit \(code) is not retried")
        }
        // Batch sends SIGKILL 30 s after SIGTERM: the drain and the summary must fit before it.
        #expect(try Self.drainTimeout("aws-batch-job-definition.json") <= 20)
        let command = try #require((definition["containerProperties"] as? [String: Any])?["command"] as? [String])
        #expect(command.last?.contains("exec pushline run") == true, "exec: Batch's SIGTERM reaches pushline, not the shell")
    }

    // MARK: Slurm

    @Test func slurmSignalsPushlineItselfAndKeepsARequeuedTasksLog() throws {
        let slurm = try Self.text("slurm-array.sh")
        let directives = slurm.split(separator: "\n").filter { $0.hasPrefix("#SBATCH ") }.map { String($0.dropFirst("#SBATCH ".count)) }
        // B: signals the batch shell, which exec turns into pushline; without it Slurm signals only
        // job steps, and there are none.
        let signal = try #require(directives.first { $0.hasPrefix("--signal=") }, "\(directives)")
        let seconds = try #require(signal.wholeMatch(of: /--signal=B:TERM@([0-9]+)/), "\(signal)")
        #expect(Int(seconds.1)! > (try Self.drainTimeout("slurm-array.sh")), "the signal leaves the drain its time before the limit")
        #expect(directives.contains("--open-mode=append"))
        #expect(directives.contains("--requeue"))
        #expect(slurm.contains("\nexec \"$pushline\" run "), "exec: the batch shell becomes pushline")
        // Paths from the environment with the shipped defaults, so scripts/slurm-check runs the
        // file unchanged.
        for variable in ["PUSHLINE_BIN", "PUSHLINE_PIPELINE", "PUSHLINE_AUDIENCE", "PUSHLINE_RESULTS", "APNS_KEY_FILE", "FCM_SERVICE_ACCOUNT"] {
            #expect(slurm.contains("${\(variable):-"), "\(variable) has a default")
        }
        #expect(slurm.contains("scontrol requeue"), "says how a stopped task is resumed")
    }
}
