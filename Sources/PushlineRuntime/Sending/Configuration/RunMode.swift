public import PushlineDelivery

/// How a run delivers: a dry run writes the requests to files; a send hands them to one lane per
/// provider, built from these configurations. `validateOnly`: FCM requests carry
/// `validate_only: true` (FCM checks them and delivers nothing); APNs has no such mode.
public enum RunMode: Sendable {
    case dryRun
    case send([ProviderSendConfiguration], validateOnly: Bool)
}
