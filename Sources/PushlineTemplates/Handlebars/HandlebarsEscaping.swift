import PushlineCore

/// Handlebars' HTML escaping (`Utils.escapeExpression`): `& < > " ' \` =`.
enum HandlebarsEscaping {
    /// Writes `text`, replacing the seven characters by their entities; runs of other bytes go
    /// out in one write.
    static func write(_ text: UnsafeRawBufferPointer, into output: inout RenderOutput) throws(RenderOutput.LimitExceeded) {
        var runStart = 0
        for (i, byte) in text.enumerated() {
            let entity: StaticString
            switch byte {
            case UInt8(ascii: "&"): entity = "&amp;"
            case UInt8(ascii: "<"): entity = "&lt;"
            case UInt8(ascii: ">"): entity = "&gt;"
            case UInt8(ascii: "\""): entity = "&quot;"
            case UInt8(ascii: "'"): entity = "&#x27;"
            case UInt8(ascii: "`"): entity = "&#x60;"
            case UInt8(ascii: "="): entity = "&#x3D;"
            default: continue
            }
            if i > runStart { try output.write(UnsafeRawBufferPointer(rebasing: text[runStart..<i])) }
            try output.write(entity)
            runStart = i + 1
        }
        if text.count > runStart { try output.write(UnsafeRawBufferPointer(rebasing: text[runStart...])) }
    }
}

extension HandlebarsEscaping {
    static func write(bytes: ArraySlice<UInt8>, into output: inout RenderOutput) throws(RenderOutput.LimitExceeded) {
        // Array.withUnsafeBytes is not typed-throws: carry the error out in a Result.
        let result: Result<Void, RenderOutput.LimitExceeded> = bytes.withUnsafeBytes { text in
            Result { () throws(RenderOutput.LimitExceeded) in try write(text, into: &output) }
        }
        try result.get()
    }
}
