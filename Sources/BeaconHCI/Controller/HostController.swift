import BeaconKit

/// Records every packet that crosses the link, e.g. a capture file writer.
public protocol PacketRecorder: Sendable {
    func record(_ packet: TimestampedPacket) throws
}

/// The host side of one HCI link. It sends commands and awaits their Command Complete or
/// Command Status, matching the opcode, within a timeout per command, and never sends more
/// commands than the controller's Num_HCI_Command_Packets allows (Core Spec v5.4, Vol 4,
/// Part E, 4.4). Every other event goes to the streams from `events()`.
public actor HostController {
    public nonisolated let transport: any HCITransport
    public let defaultTimeout: Duration
    private let recorders: [any PacketRecorder]

    /// Commands the controller accepts now. One until it says otherwise (Vol 4, Part E, 4.4).
    private var credits = 1
    private var nextID = 0
    private var creditQueue: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    /// Commands sent (or being sent) whose reply has not been taken yet. A reply can arrive
    /// while `send` is still suspended in the transport, so it is kept until `send` asks.
    private var awaitingReply: [ReplyWaiter] = []
    private var expired: Set<Int> = []
    private var ignoredReplies: [HCIOpcode] = []
    /// Tasks in `waitForUnmatchedReplies` or `waitForCommandsAwaitingCredit`, woken at each change.
    private var stateWaiters: [CheckedContinuation<Void, Never>] = []
    private var subscribers: [Int: AsyncThrowingStream<TimestampedPacket, any Error>.Continuation] = [:]
    private var failure: HostControllerError?
    private var readerTask: Task<Void, Never>?
    /// Times command timeouts; tests give a clock they advance by hand.
    private let clock: any Clock<Duration>

    private struct ReplyWaiter {
        var id: Int
        var opcode: HCIOpcode
        var continuation: CheckedContinuation<CommandReply, any Error>?
        var outcome: Result<CommandReply, any Error>?

        /// Hands the outcome to `send`, now if it waits, or when it asks. Returns true when the
        /// waiter is done and can be removed.
        mutating func settle(_ result: Result<CommandReply, any Error>) -> Bool {
            guard let continuation else {
                outcome = result
                return false
            }
            continuation.resume(with: result)
            return true
        }
    }

    public init(transport: any HCITransport, defaultTimeout: Duration = .seconds(2), recorders: [any PacketRecorder] = [],
                clock: any Clock<Duration> = ContinuousClock()) {
        self.transport = transport
        self.defaultTimeout = defaultTimeout
        self.recorders = recorders
        self.clock = clock
    }

    /// A controller nobody holds any more releases its link, so the reader thread and the
    /// descriptor do not outlive it.
    deinit { transport.close() }

    /// Starts reading from the transport. Called by the first command or subscription.
    private func startReadingIfNeeded() {
        guard readerTask == nil else { return }
        let incoming = transport.incoming
        readerTask = Task { [weak self] in
            do {
                for try await packet in incoming {
                    guard let self else { return }
                    await self.handle(packet)
                }
                await self?.fail(.linkFailed("\(self?.transport.name ?? "transport") was closed"))
            } catch let error as HCITransportError {
                await self?.fail(.linkFailed(error.description))
            } catch {
                await self?.fail(.linkFailed("\(error)"))
            }
        }
    }

    /// Sends a command and returns the controller's reply. Throws `commandFailed` with the HCI
    /// status when the controller refuses, `timedOut` when no reply for this opcode arrives in
    /// time, and `linkFailed` when the link breaks.
    @discardableResult
    public func send(_ command: HCICommand, timeout: Duration? = nil) async throws -> CommandReply {
        startReadingIfNeeded()
        if let failure { throw failure }
        let id = nextID
        nextID += 1
        let limit = timeout ?? defaultTimeout
        let clock = self.clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: limit)
            if !Task.isCancelled { await self?.expire(id: id, opcode: command.opcode, after: limit) }
        }
        defer {
            timer.cancel()
            expired.remove(id)
        }
        if credits > 0 && creditQueue.isEmpty {
            credits -= 1
        } else {
            try await withCheckedThrowingContinuation { continuation in
                creditQueue.append((id, continuation))
                wakeStateWaiters()
            }
        }
        if let failure { throw failure }
        if expired.contains(id) {
            handOutCredits(count: 1)
            throw HostControllerError.timedOut(opcode: command.opcode, after: limit, ignoredReplies: ignoredReplies)
        }
        let packet = TimestampedPacket(microseconds: FileDescriptorTransport.nowMicroseconds(), direction: .sent,
                                       packet: command.packet)
        awaitingReply.append(ReplyWaiter(id: id, opcode: command.opcode))
        do {
            try record(packet)
            try await transport.send(command.packet)
        } catch {
            let failure = HostControllerError.linkFailed("\(error)")
            fail(failure)
            awaitingReply.removeAll { $0.id == id }
            throw failure
        }
        let reply = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CommandReply, any Error>) in
            guard let index = awaitingReply.firstIndex(where: { $0.id == id }) else {
                // `fail` removed every waiter while the transport was sending.
                continuation.resume(throwing: failure ?? .linkFailed("\(transport.name) was closed"))
                return
            }
            if let outcome = awaitingReply[index].outcome {
                awaitingReply.remove(at: index)
                continuation.resume(with: outcome)
            } else {
                awaitingReply[index].continuation = continuation
            }
        }
        switch reply {
        case .complete(let complete):
            if let status = complete.status, !status.isSuccess {
                throw HostControllerError.commandFailed(opcode: command.opcode, status: status)
            }
        case .status(let status):
            if !status.status.isSuccess {
                throw HostControllerError.commandFailed(opcode: command.opcode, status: status.status)
            }
        }
        return reply
    }

    /// Events other than Command Complete and Command Status, from now on. The stream finishes
    /// with the link's error when the link fails.
    public func events() -> AsyncThrowingStream<TimestampedPacket, any Error> {
        startReadingIfNeeded()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: TimestampedPacket.self)
        if let failure {
            continuation.finish(throwing: failure)
            return stream
        }
        let id = nextID
        nextID += 1
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    /// Replies that matched no command in flight, oldest first.
    public var unmatchedReplies: [HCIOpcode] { ignoredReplies }

    /// Returns once `count` replies matched no command, so a test acts only after the host has
    /// read them, however busy the machine is.
    public func waitForUnmatchedReplies(_ count: Int) async {
        while ignoredReplies.count < count { await withCheckedContinuation { stateWaiters.append($0) } }
    }

    /// Returns once `count` commands wait for a credit from the controller.
    public func waitForCommandsAwaitingCredit(_ count: Int) async {
        while creditQueue.count < count { await withCheckedContinuation { stateWaiters.append($0) } }
    }

    private func wakeStateWaiters() {
        let waiters = stateWaiters
        stateWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Closes the link; commands in flight fail and event streams finish.
    public func close() {
        transport.close()
        fail(.linkFailed("\(transport.name) was closed by the host"), finishSubscribersWithError: false)
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    private func record(_ packet: TimestampedPacket) throws {
        for recorder in recorders { try recorder.record(packet) }
    }

    private func handle(_ packet: TimestampedPacket) {
        do {
            try record(packet)
        } catch {
            fail(.linkFailed("cannot record the capture: \(error)"))
            transport.close()
            return
        }
        guard packet.packet.type == .event else { return }
        let event: HCIEvent
        do {
            event = try HCIEvent(body: packet.packet.body)
        } catch {
            fail(.malformedEvent(error))
            transport.close()
            return
        }
        do throws(DecodeError) {
            switch event.code {
            case .commandComplete:
                let complete = try CommandComplete(event: event)
                deliver(.complete(complete), credits: complete.numberOfCommandPackets)
            case .commandStatus:
                let status = try CommandStatus(event: event)
                deliver(.status(status), credits: status.numberOfCommandPackets)
            default:
                for subscriber in subscribers.values { subscriber.yield(packet) }
            }
        } catch {
            fail(.malformedEvent(error))
            transport.close()
        }
    }

    private func deliver(_ reply: CommandReply, credits newCredits: UInt8) {
        // Num_HCI_Command_Packets is the number the host may send now, not an increment.
        credits = Int(newCredits)
        if reply.opcode != .noOperation {
            if let index = awaitingReply.firstIndex(where: { $0.opcode == reply.opcode && $0.outcome == nil }) {
                if awaitingReply[index].settle(.success(reply)) { awaitingReply.remove(at: index) }
            } else {
                ignoredReplies.append(reply.opcode)
                wakeStateWaiters()
            }
        }
        handOutCredits(count: 0)
    }

    /// Gives the available credits, plus `count` extra, to commands waiting for one.
    private func handOutCredits(count extra: Int) {
        credits += extra
        while credits > 0, !creditQueue.isEmpty {
            credits -= 1
            creditQueue.removeFirst().continuation.resume()
        }
    }

    private func expire(id: Int, opcode: HCIOpcode, after limit: Duration) {
        let error = HostControllerError.timedOut(opcode: opcode, after: limit, ignoredReplies: ignoredReplies)
        if let index = creditQueue.firstIndex(where: { $0.id == id }) {
            creditQueue.remove(at: index).continuation.resume(throwing: error)
        } else if let index = awaitingReply.firstIndex(where: { $0.id == id && $0.outcome == nil }) {
            if awaitingReply[index].settle(.failure(error)) { awaitingReply.remove(at: index) }
            // Like Linux's hci_cmd_timeout: assume the reply was lost and allow one command,
            // or a single lost event would wedge the link for good.
            credits = max(credits, 1)
            handOutCredits(count: 0)
        } else {
            expired.insert(id)
        }
    }

    private func fail(_ error: HostControllerError, finishSubscribersWithError: Bool = true) {
        guard failure == nil else { return }
        failure = error
        for waiter in creditQueue { waiter.continuation.resume(throwing: error) }
        creditQueue.removeAll()
        for index in awaitingReply.indices { _ = awaitingReply[index].settle(.failure(error)) }
        awaitingReply.removeAll { $0.continuation != nil }
        for subscriber in subscribers.values {
            if finishSubscribersWithError { subscriber.finish(throwing: error) } else { subscriber.finish() }
        }
        subscribers.removeAll()
    }
}
