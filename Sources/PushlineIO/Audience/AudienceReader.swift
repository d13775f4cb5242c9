/// Reads an audience file (NDJSON, plain or gzipped) as batches of lines, with bounded memory.
///
/// **Blocking by design.** Every call does plain `read(2)`s and inflates on the calling thread,
/// so it must not run on Swift's cooperative pool: the runtime drives it from a dedicated thread
/// and hands the batches to the async stages through a bounded queue. Create the reader on that
/// thread; it is noncopyable (it owns the file descriptor and inflater state) and not `Sendable`.
///
/// Gzip is recognised by its magic bytes (`1f 8b`), not by the file name; all concatenated members
/// are read (what `cat a.gz b.gz` and pigz produce). Memory stays at the two I/O buffers plus the
/// batch being filled, whatever the file size; a line over `maxLineBytes` is skipped and reported
/// in `LineBatch.oversizeLines` without ever being held whole.
///
/// On a read or gzip error, every line completed before it is returned first; the incomplete
/// line at the point of failure is not; the following `nextBatch()` throws, and so does every
/// call after it.
public struct AudienceReader: ~Copyable {
    public struct Options: Sendable {
        /// A batch is handed over once it holds this many lines (oversize ones included).
        public var maxBatchLines: Int
        /// ... or once its kept line bytes reach this size.
        public var maxBatchBytes: Int
        /// Longer lines (terminator excluded) are skipped and reported.
        public var maxLineBytes: Int
        /// Size of each `read(2)`.
        public var readBufferSize: Int
        /// Size of the buffer gzip data is inflated into.
        public var inflateBufferSize: Int

        public init(
            maxBatchLines: Int = 4096,
            maxBatchBytes: Int = 1 << 20,
            maxLineBytes: Int = 1 << 20,
            readBufferSize: Int = 256 << 10,
            inflateBufferSize: Int = 1 << 20
        ) {
            self.maxBatchLines = maxBatchLines
            self.maxBatchBytes = maxBatchBytes
            self.maxLineBytes = maxLineBytes
            self.readBufferSize = readBufferSize
            self.inflateBufferSize = inflateBufferSize
        }
    }

    private enum State {
        case reading
        case finished
        case failed(AudienceReadError)
    }

    /// The path as given; `-` is standard input.
    public let path: String
    /// Whether the input is gzip (by its first two bytes, which the first step reads: so a
    /// stop is heard even while a pipe has not sent them).
    public private(set) var isGzip = false
    /// Bytes read from the file so far (compressed bytes for gzip).
    public private(set) var bytesRead = 0
    /// Bytes handed to line splitting so far (after decompression).
    public private(set) var uncompressedBytes = 0
    /// Physical lines completed so far, blank and oversize ones included.
    public var lineCount: Int { assembler.completedLineCount }

    private let fd: Int32
    private let closesDescriptor: Bool
    /// A pipe, socket or terminal, whose `read(2)` waits for a writer that may never write: a
    /// step with a budget looks (`poll(2)`) before it reads. A regular file never waits.
    private let mayWait: Bool
    /// What `read(2)` fills; for plain input it is also what lines are cut from.
    private let input: UnsafeMutableBufferPointer<UInt8>
    private var unconsumedInput: Range<Int>
    private var inputEnded = false
    /// Whether the first bytes were looked at (gzip or text).
    private var sniffed = false
    private let inflateBufferSize: Int
    private var inflater: GzipInflater?
    private var inflated: UnsafeMutableBufferPointer<UInt8>?
    /// Bytes (in `input` or `inflated`) not yet given to the assembler.
    private var pending: Range<Int> = 0..<0
    private var assembler: LineAssembler
    private var state = State.reading
    /// A gzip failure met after some output in the same inflate call; thrown once that output is split.
    private var deferredError: AudienceReadError?

    /// Opens `path` (`-` for standard input) and looks at its first bytes to tell gzip from plain text.
    public init(path: String, options: Options = Options()) throws(AudienceReadError) {
        if path == "-" {
            try self.init(fileDescriptor: 0, closesDescriptor: false, name: path, options: options)
            return
        }
        switch POSIX.openForReading(path) {
        case .success(let fd):
            try self.init(fileDescriptor: fd, closesDescriptor: true, name: path, options: options)
        case .failure(let error):
            throw .openFailed(path: path, error)
        }
    }

    /// Reads from an open descriptor (a pipe, a socket, standard input); `name` is used in errors.
    /// The descriptor is closed when the reader goes away only if `closesDescriptor` is true.
    public init(
        fileDescriptor fd: Int32, closesDescriptor: Bool, name: String, options: Options = Options()
    ) throws(AudienceReadError) {
        // The inflater counts in UInt32: larger buffers would trap when handed to it.
        precondition((2...(1 << 30)).contains(options.readBufferSize) && (1...(1 << 30)).contains(options.inflateBufferSize), "buffer sizes must be 2 bytes to 1 GiB")
        self.path = name
        self.fd = fd
        self.closesDescriptor = closesDescriptor
        self.mayWait = (try? POSIX.descriptorKind(fd).get()).map { $0 != .regular } ?? true
        self.input = .allocate(capacity: options.readBufferSize)
        self.inflateBufferSize = options.inflateBufferSize
        unconsumedInput = 0..<0
        // The assembler adds to these (a CR, an eighth for capacity): keep them far from Int.max
        // whatever a caller passes. The pipeline schema bounds max_line_bytes to 64 MiB anyway.
        assembler = LineAssembler(
            maxLineBytes: min(max(options.maxLineBytes, 1), Self.largestLimit),
            maxBatchLines: min(max(options.maxBatchLines, 1), Self.largestLimit),
            maxBatchBytes: min(max(options.maxBatchBytes, 1), Self.largestLimit)
        )
    }

    /// 1 TiB: beyond any real line or batch, and sums of a few such values cannot overflow.
    static let largestLimit = 1 << 40

    deinit {
        input.deallocate()
        inflated?.deallocate()
        if closesDescriptor { _ = POSIX.closeDescriptor(fd) }
    }

    /// The next batch of lines, or nil at the end of the input.
    public mutating func nextBatch() throws(AudienceReadError) -> LineBatch? {
        while true {
            switch try nextStep(splittingAtMost: .max) {
            case .batch(let batch): return batch
            case .end: return nil
            case .inProgress: continue
            }
        }
    }

    /// What `nextStep` gives.
    public enum Step {
        /// Lines completed since the last batch (a full batch, or fewer once the call's budget
        /// ran out, or the last ones of the input).
        case batch(LineBatch)
        /// The budget ran out before any line was completed (a line longer than the budget is
        /// being skipped), or a pipe had no data for `Self.stepWait`. Nothing is lost; the next
        /// call goes on from here.
        case inProgress
        /// The end of the input.
        case end
    }

    /// Like `nextBatch`, but returns once it has split `budget` bytes (after decompression)
    /// without filling a batch: with the lines completed so far, or `.inProgress` when there are
    /// none. A full batch normally comes long before (`maxBatchBytes`); the budget is for input
    /// that never completes one, such as an endless line (a binary file, `/dev/zero`) or an
    /// endless run of blank lines, which would otherwise keep the caller from a stop request and
    /// from reporting its progress for as long as the input lasts. It also returns when a pipe
    /// (standard input) has had no data for `stepWait`, rather than wait in `read(2)` for a
    /// writer that may have stalled.
    /// A budget below one byte counts as one: every step reads.
    public mutating func nextStep(splittingAtMost budget: Int) throws(AudienceReadError) -> Step {
        switch state {
        case .reading: break
        case .finished: return .end
        case .failed(let error): throw error
        }
        let budget = max(budget, 1)
        // How long a read may wait for a pipe's data before the step returns (-1: no limit).
        let wait = budget == .max ? -1 : Self.stepWait
        let start = uncompressedBytes
        while true {
            if !pending.isEmpty {
                let source = UnsafeBufferPointer(inflated ?? input)
                let used = assembler.consume(UnsafeBufferPointer(rebasing: source[pending]))
                pending = (pending.lowerBound + used)..<pending.upperBound
                if assembler.isFull { return Self.step(assembler.takeBatch()) }
                continue
            }
            if uncompressedBytes - start >= budget { return Self.step(assembler.takeBatch()) }
            do {
                switch try refill(waiting: wait) {
                case true?: continue
                case nil: return Self.step(assembler.takeBatch())
                case false?: break
                }
                assembler.finishInput()
                state = .finished
                return assembler.takeBatch().map { .batch($0) } ?? .end
            } catch {
                // Lines completed before the failure go out first; the error comes on the next call.
                state = .failed(error)
                if let batch = assembler.takeBatch() { return .batch(batch) }
                throw error
            }
        }
    }

    /// How long a step waits for a pipe's next bytes, in milliseconds.
    public static let stepWait: Int32 = 100

    private static func step(_ batch: LineBatch?) -> Step {
        batch.map { .batch($0) } ?? .inProgress
    }

    /// Fills `pending` with the next bytes to split; false at a clean end of input, nil when a
    /// pipe had no data within `wait` milliseconds (-1: no limit).
    private mutating func refill(waiting wait: Int32) throws(AudienceReadError) -> Bool? {
        if let deferredError { throw deferredError }
        if !sniffed {
            guard try sniff(waiting: wait) else { return nil }
            // Text: the sniffed bytes are split first. Gzip: they are inflated below.
            if !pending.isEmpty { return true }
        }
        guard let inflater, let inflated else {
            guard let read = try readInput(waiting: wait) else { return nil }
            guard read else { return false }
            pending = unconsumedInput
            unconsumedInput = 0..<0
            uncompressedBytes += pending.count
            return true
        }
        while true {
            guard let read = try readInput(waiting: wait) else { return nil }
            if !read {
                if inflater.atMemberBoundary { return false }
                throw .truncatedGzip(path: path, offset: bytesRead)
            }
            let step = inflater.inflate(UnsafeBufferPointer(rebasing: input[unconsumedInput]), into: inflated)
            // This loop hands the unconsumed bytes over again: a step that took none, made none
            // and named no fault would turn forever.
            guard step.consumed > 0 || step.produced > 0 || step.failure != nil else {
                throw .corruptGzip(path: path, offset: bytesRead - unconsumedInput.count, zlibMessage: "the inflater made no progress")
            }
            unconsumedInput = (unconsumedInput.lowerBound + step.consumed)..<unconsumedInput.upperBound
            if let failure = step.failure {
                let offset = bytesRead - failure.unconsumedInput
                let error: AudienceReadError = failure.isDataError
                    ? .corruptGzip(path: path, offset: offset, zlibMessage: failure.message)
                    : .zlibFailure(path: path, offset: offset, status: failure.status)
                // Lines completed before the fault go out first (the contract); the error follows.
                guard step.produced > 0 else { throw error }
                deferredError = error
            }
            let produced = step.produced
            if produced > 0 {
                pending = 0..<produced
                uncompressedBytes += produced
                return true
            }
        }
    }

    /// Reads enough bytes to see the gzip magic (a pipe may deliver them one read at a time) and
    /// sets the reader up for gzip or text; false when a pipe had no data within `wait`
    /// milliseconds (call again).
    private mutating func sniff(waiting wait: Int32) throws(AudienceReadError) -> Bool {
        while bytesRead < 2 && !inputEnded {
            guard dataArrives(within: wait) else { return false }
            let free = UnsafeMutableBufferPointer(rebasing: input[bytesRead...])
            switch POSIX.readSome(fd, into: UnsafeMutableRawBufferPointer(free)) {
            case .success(0): inputEnded = true
            case .success(let count): bytesRead += count
            case .failure(let error): throw .readFailed(path: path, offset: bytesRead, error)
            }
        }
        adviseReadAhead()
        let filled = bytesRead
        if filled >= 2 && input[0] == 0x1F && input[1] == 0x8B {
            do {
                inflater = try GzipInflater()
            } catch {
                throw .zlibFailure(path: path, offset: nil, status: error.status)
            }
            inflated = .allocate(capacity: inflateBufferSize)
            isGzip = true
            unconsumedInput = 0..<filled
        } else {
            pending = 0..<filled
            uncompressedBytes = filled
        }
        sniffed = true
        return true
    }

    /// How far ahead of the reading a regular file is asked into the page cache. A sending or
    /// checkpointing run fsyncs its results every few seconds, and on a disk with a write cache
    /// each fsync ends in a cache flush (0.3-0.6 s on the project's VM) that holds up every read
    /// queued behind it: with only the kernel's own read-ahead (a few MiB, a tenth of a second
    /// of reading) the reader ran dry at each flush and the whole run stopped with it. 64 MiB is
    /// well over a second of reading; topped up each time half of it has been read.
    static let readAheadWindow = 64 << 20
    /// Linux reads at most the device's read-ahead size (`read_ahead_kb`, as little as 128 KiB)
    /// per advice, whatever length it is given: the window is asked for in pieces that small.
    static let readAheadPiece = 128 << 10
    private var advisedThrough = 0

    /// Keeps the next `readAheadWindow` bytes of a regular file on their way into the page
    /// cache (a pipe has nothing to read ahead). Only page cache: the reader's own memory does
    /// not grow. Nothing is asked past the file's end (a small file costs one `fstat`, not 512
    /// advices).
    private mutating func adviseReadAhead() {
        guard !mayWait, bytesRead + Self.readAheadWindow / 2 > advisedThrough else { return }
        var offset = max(advisedThrough, bytesRead)
        advisedThrough = bytesRead + Self.readAheadWindow
        let end = min(advisedThrough, POSIX.fileSize(fd))
        while offset < end {
            POSIX.adviseWillNeed(fd, offset: offset, length: Self.readAheadPiece)
            offset += Self.readAheadPiece
        }
    }

    /// Whether a `read(2)` now would not wait past `wait` milliseconds (-1: no limit): always
    /// for a regular file; for a pipe, once it has data, its end or an error.
    private func dataArrives(within wait: Int32) -> Bool {
        !mayWait || wait < 0 || POSIX.waitReadable(fd, milliseconds: wait)
    }

    /// Reads the next block into `input` (only once it is used up); false at end of file, nil
    /// when a pipe had no data within `wait` milliseconds.
    private mutating func readInput(waiting wait: Int32) throws(AudienceReadError) -> Bool? {
        if !unconsumedInput.isEmpty { return true }
        if inputEnded { return false }
        guard dataArrives(within: wait) else { return nil }
        switch POSIX.readSome(fd, into: UnsafeMutableRawBufferPointer(input)) {
        case .success(0):
            inputEnded = true
            return false
        case .success(let count):
            bytesRead += count
            unconsumedInput = 0..<count
            adviseReadAhead()
            return true
        case .failure(let error):
            throw .readFailed(path: path, offset: bytesRead, error)
        }
    }
}
