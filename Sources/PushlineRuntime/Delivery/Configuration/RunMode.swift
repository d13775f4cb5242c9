public import PushlineDelivery

/// What `pushline run` does with the encoded requests: write them (dry run) or send them to the
/// providers configured (`validateOnly`: FCM checks without delivering; APNs has no such mode).
public enum RunMode: Sendable {
    case dryRun
    case send([ProviderSendConfiguration], validateOnly: Bool)
}
