import Crypto
import Foundation

/// Throttles wrong tokens per client address. Each address has an allowance of `burst` wrong
/// tokens that refills `perMinute` a minute; while less than one is left, a token that has not
/// worked from that address recently is answered 429 without being looked up, so guessing costs
/// the guesser time and the database nothing. Tokens that did work from the address (a gateway
/// behind the same NAT as a guesser, say) keep working, and other addresses are not touched.
final class AuthFailureThrottle: @unchecked Sendable {
    struct Entry {
        var allowance: Double
        var updated: Duration
        /// Digests of tokens that authenticated from this address, newest last.
        var recentlyValid: [SHA256Digest] = []
    }

    let burst: Double
    let perMinute: Double
    /// Addresses remembered at once; past it, those with (almost) nothing held against them go
    /// first, and with them the tokens that worked from them.
    let maxAddresses: Int
    static let recentTokensPerAddress = 8
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private let time: ElapsedTime

    init(burst: Int, perMinute: Int, maxAddresses: Int = 10_000, clock: any Clock<Duration> = ContinuousClock()) {
        self.burst = Double(burst)
        self.perMinute = Double(perMinute)
        self.maxAddresses = maxAddresses
        self.time = ElapsedTime(clock: clock)
    }

    /// Seconds until `token` may be tried from `address`, or nil when it may be now.
    func wait(address: String, token: String) -> Int? {
        lock.withLock {
            guard var entry = entries[address] else { return nil }
            refill(&entry)
            entries[address] = entry
            guard entry.allowance < 1, !entry.recentlyValid.contains(SHA256.hash(data: Data(token.utf8))) else { return nil }
            return max(1, Int(((1 - entry.allowance) * 60 / perMinute).rounded(.up)))
        }
    }

    func failed(address: String) {
        lock.withLock {
            var entry = entries[address] ?? Entry(allowance: burst, updated: time.now)
            refill(&entry)
            entry.allowance = max(0, entry.allowance - 1)
            if entries[address] == nil { makeRoom() }
            entries[address] = entry
        }
    }

    func succeeded(address: String, token: String) {
        lock.withLock {
            var entry = entries[address] ?? Entry(allowance: burst, updated: time.now)
            if entries[address] == nil { makeRoom() }
            let digest = SHA256.hash(data: Data(token.utf8))
            entry.recentlyValid.removeAll { $0 == digest }
            entry.recentlyValid.append(digest)
            if entry.recentlyValid.count > Self.recentTokensPerAddress { entry.recentlyValid.removeFirst() }
            entries[address] = entry
        }
    }

    var addressesHeld: Int { lock.withLock { entries.count } }

    private func refill(_ entry: inout Entry) {
        let now = time.now
        let seconds = ElapsedTime.seconds(now - entry.updated)
        entry.allowance = min(burst, entry.allowance + seconds * perMinute / 60)
        entry.updated = now
    }

    private func makeRoom() {
        guard entries.count >= maxAddresses else { return }
        for (address, var entry) in entries {
            refill(&entry)
            if entry.allowance >= burst - 1 { entries[address] = nil }
        }
        // Every address is mid-flood (a spoofing botnet): forget them all rather than grow.
        if entries.count >= maxAddresses { entries.removeAll() }
    }
}
