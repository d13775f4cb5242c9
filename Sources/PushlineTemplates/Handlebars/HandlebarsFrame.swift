/// One level of the render's scope chain. Frames live on the stack (`withUnsafePointer`) and
/// point at their parent, so entering a block or an iteration never allocates.
struct HandlebarsFrame {
    /// `this`.
    var context: HandlebarsValue
    /// Whether this frame changed the context: only those count for `../` (Handlebars pushes a
    /// depth only when the context object changes, so `#if` is invisible to `../`).
    var ownsContext: Bool
    /// `@index`, `@key`, `@first`, `@last` inside `#each` and iterated sections.
    var loop: HandlebarsLoopData?
    /// Values bound by `as |a b|` (count 0 when the block declared none).
    var blockParamCount = 0
    var blockParam0: HandlebarsValue = .missing
    var blockParam1: HandlebarsValue = .missing
    var parent: UnsafePointer<HandlebarsFrame>?
}

struct HandlebarsLoopData {
    var index: Int
    var count: Int
    var key: HandlebarsValue
}

extension UnsafePointer where Pointee == HandlebarsFrame {
    /// The frame holding the context `depth` levels up (`../` count), or nil above the root.
    func contextFrame(depth: Int) -> UnsafePointer<HandlebarsFrame>? {
        var frame = self
        while !frame.pointee.ownsContext, let parent = frame.pointee.parent { frame = parent }
        var remaining = depth
        while remaining > 0 {
            guard let parent = frame.pointee.parent else { return nil }
            frame = parent
            while !frame.pointee.ownsContext, let next = frame.pointee.parent { frame = next }
            remaining -= 1
        }
        return frame
    }

    /// The `depth`-th enclosing loop frame (`@../index` has depth 1).
    func loopFrame(depth: Int) -> HandlebarsLoopData? {
        var frame: UnsafePointer<HandlebarsFrame>? = self
        var remaining = depth
        while let current = frame {
            if let loop = current.pointee.loop {
                if remaining == 0 { return loop }
                remaining -= 1
            }
            frame = current.pointee.parent
        }
        return nil
    }

    /// The frame binding the block parameters `scopes` declaring blocks up.
    func blockParamFrame(scopes: Int) -> UnsafePointer<HandlebarsFrame>? {
        var frame: UnsafePointer<HandlebarsFrame>? = self
        var remaining = scopes
        while let current = frame {
            if current.pointee.blockParamCount > 0 {
                if remaining == 0 { return current }
                remaining -= 1
            }
            frame = current.pointee.parent
        }
        return nil
    }
}
