/// When an idle event stream writes its keep-alive comment: every `interval` of the server's
/// clock since the stream last wrote anything. The write is also how the server learns that a
/// client went away (the socket fails it), so the interval bounds how long a closed stream holds
/// its place among the stream limits: about two intervals (the first write after the client
/// closes may still be accepted by the kernel).
struct StreamKeepAlive {
    let interval: Duration
    private let clock = ContinuousClock()
    private var lastWrite: ContinuousClock.Instant

    init(interval: Duration) {
        self.interval = interval
        lastWrite = clock.now
    }

    /// Records a write of events.
    mutating func wrote() { lastWrite = clock.now }

    /// Whether a keep-alive is due now; if so, counts it as written.
    mutating func isDue() -> Bool {
        let now = clock.now
        guard now - lastWrite >= interval else { return false }
        lastWrite = now
        return true
    }

    static let comment = ": keep-alive\n\n"
}
