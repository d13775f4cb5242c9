/// google.rpc.Status error bodies, as FCM v1 sends them.
enum GoogleStatus {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"

    /// `{"error":{"code","message","status","details":[FcmError]}}`; no details when `errorCode` is nil.
    static func body(code: Int, message: String, status: String, errorCode: String?) -> String {
        var text = "{\"error\":{\"code\":\(code),\"message\":\(JSONText.quoted(message)),\"status\":\"\(status)\""
        if let errorCode {
            text += ",\"details\":[{\"@type\":\"\(fcmErrorType)\",\"errorCode\":\"\(errorCode)\"}]"
        }
        return text + "}}"
    }

    static func answer(code: Int, message: String, status: String, errorCode: String?, headers: [(String, String)] = []) -> EmulatorAnswer {
        .json(code, body(code: code, message: message, status: status, errorCode: errorCode), headers: headers)
    }

    /// The stats label: the FcmError code when there is one, else the status.
    static func label(code: Int, status: String, errorCode: String?) -> String {
        "\(code) \(errorCode ?? status)"
    }
}
