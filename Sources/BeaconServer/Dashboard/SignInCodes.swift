import Crypto
import Foundation

/// One-time sign-in codes for the dashboard: `proxima serve --demo` prints a link carrying a code,
/// and the page exchanges it (POST) for the token it stands for, so the token itself never sits in
/// a URL, a browser history or a shell history. A code works once, for a short while.
public actor SignInCodes {
    struct Entry {
        var token: String
        var expires: Duration
    }

    /// Codes are kept by their hash, as tokens are, so a memory dump lists no usable code.
    private var entries: [String: Entry] = [:]
    private let lifetime: Duration
    private let capacity: Int
    private let time: ElapsedTime

    /// - Parameter clock: a code's lifetime is measured on it.
    public init(lifetime: Duration = .seconds(600), capacity: Int = 1_000, clock: any Clock<Duration> = ContinuousClock()) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.time = ElapsedTime(clock: clock)
    }

    /// A new code standing for `token` (128 random bits, URL-safe).
    public func issue(for token: String) -> String {
        let now = time.now
        entries = entries.filter { $0.value.expires > now }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.expires < $1.value.expires }) {
            entries.removeValue(forKey: oldest.key)
        }
        var generator = SystemRandomNumberGenerator()
        let code = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        entries[Self.hash(code)] = Entry(token: token, expires: now + lifetime)
        return code
    }

    /// The token a code stands for, once: the code is gone afterwards, used or expired.
    public func redeem(_ code: String) -> String? {
        guard let entry = entries.removeValue(forKey: Self.hash(code)), entry.expires > time.now else { return nil }
        return entry.token
    }

    static func hash(_ code: String) -> String {
        SHA256.hash(data: Data(code.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
