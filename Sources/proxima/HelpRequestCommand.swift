import ArgumentParser
import BeaconGateway
import BeaconKit
import BeaconServer
import Foundation

/// `proxima help-request`: a visitor's phone asks for help (advertising major 999 with a random
/// minor and waiting for a helper), or, with `--helper ID`, a helper acknowledges a request and
/// follows the distance to the visitor until they meet (docs/apps.md).
struct HelpRequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "help-request",
        abstract: "Ask for help from a phone (advertise the help beacon, file the request, wait for a helper), or acknowledge one with --helper ID.")

    @OptionGroup var connection: ServerConnection

    @Option(help: "The visitor's name, shown to the helpers.")
    var name: String?

    @Option(help: ArgumentHelp("Acknowledge help request ID as a helper and print the distance to the visitor each second until immediate, then mark it done (with a staff token there is no phone ranging the visitor: it waits for the request to be marked).",
                               valueName: "ID"))
    var helper: Int?

    @Option(help: ArgumentHelp("Advertise on the simulator: write the help beacon to this transmitter file (a scenario's `advertisers` entry names it) instead of a controller.",
                               valueName: "FILE"))
    var simulatedTransmitter: String?

    @Option(parsing: .unconditional, help: "Measured power the help beacon advertises: RSSI at 1 m in dBm.")
    var power: Int = -59

    @OptionGroup var controller: ControllerOptions

    func validate() throws {
        let controllers = [controller.device, controller.h4, controller.serial].compactMap { $0 }.count
        if helper != nil {
            if name != nil { throw ValidationError("--name is the visitor's; a helper acknowledges with --helper ID alone") }
            if controllers > 0 || simulatedTransmitter != nil {
                throw ValidationError("a helper does not advertise; drop --device/--h4/--serial/--simulated-transmitter")
            }
        } else if controllers > 0 && simulatedTransmitter != nil {
            throw ValidationError("choose one transmitter: --device, --h4, --serial or --simulated-transmitter")
        }
        if let name, name.count > HelpRequestLimits().nameLength {
            throw ValidationError("--name: expected at most \(HelpRequestLimits().nameLength) characters, found \(name.count)")
        }
        guard (-128...(-1)).contains(power) else { throw ValidationError("--power: expected dBm in -128…-1, found \(power)") }
    }

    var client: ServerJSONClient { connection.client }

    func run() async throws {
        if let helper { try await help(requestID: helper) } else { try await ask() }
    }

    // MARK: The visitor

    private func ask() async throws {
        let transmitter: any HelpBeaconTransmitter = if let simulatedTransmitter {
            SimulatedHelpTransmitter(url: URL(fileURLWithPath: simulatedTransmitter))
        } else {
            ControllerHelpTransmitter(endpoint: try controller.endpoint())
        }
        let signals = ProcessSignals.stream()
        let request = try await file()
        let frame = IBeaconFrame(identity: request.beacon.identity, measuredPower: MeasuredPower(Int8(power)))
        do {
            try StandardOutput.line("help request \(request.id) filed: \(request.beacon.uuid.uuidString) major \(request.beacon.major) minor \(request.beacon.minor)"
                                    + (request.nearest?.label.map { ", near \($0)" } ?? ""))
            try StandardOutput.line(try await transmitter.start(frame))
        } catch {
            await transmitter.stop()
            _ = try? await client.data("POST", "/v1/help-requests/\(request.id)/cancel")
            printError("could not advertise the help beacon: \(error); the request was cancelled")
            throw ExitCode.failure
        }
        let stream = HelpRequestStream(server: connection.url, token: connection.token, requestID: request.id)
        let outcome = await withTaskGroup(of: VisitorOutcome.self) { group in
            group.addTask {
                do {
                    var finished: VisitorOutcome = .ended
                    try await stream.follow { change in
                        try Self.announce(change)
                        switch change.kind {
                        case "done": finished = .done
                        case "cancelled": finished = .cancelledByServer
                        default: return true
                        }
                        return false
                    }
                    return finished
                } catch {
                    return .failed("\(error)")
                }
            }
            group.addTask {
                for await number in signals { return .signal(number) }
                return .ended
            }
            let first = await group.next() ?? .ended
            group.cancelAll()
            return first
        }
        await transmitter.stop()
        switch outcome {
        case .done, .cancelledByServer, .ended:
            try StandardOutput.line("advertising stopped")
        case .signal(let number):
            _ = try? await client.data("POST", "/v1/help-requests/\(request.id)/cancel")
            try StandardOutput.line("\(ProcessSignals.name(number)) received: help request \(request.id) cancelled, advertising stopped")
        case .failed(let message):
            printError(message)
            throw ExitCode.failure
        }
    }

    enum VisitorOutcome: Sendable {
        case done, cancelledByServer, ended
        case signal(Int32)
        case failed(String)
    }

    /// Files the request with a random minor, trying another when a live request of the site
    /// already advertises it.
    private func file() async throws -> HelpRequest {
        for _ in 0..<20 {
            let minor = UInt16.random(in: 1...65534)
            do {
                return try await client.send("POST", "/v1/help-requests", NewHelpRequest(name: name, minor: minor), as: HelpRequest.self)
            } catch let failure as ServerJSONClient.Failure where failure.status == 409 && failure.body.contains(#""field":"minor""#) {
                continue
            }
        }
        printError("every random minor tried was taken by a live help request of the site")
        throw ExitCode.failure
    }

    /// What the visitor sees of each change.
    static func announce(_ change: HelpRequestChange) throws {
        let request = change.request
        switch change.kind {
        case "acknowledged":
            let who = request.helper?.name ?? "a helper"
            let lag = request.acknowledgedAt.map { Date().timeIntervalSince1970 - $0 }
            try StandardOutput.line("help is on the way: \(who)" + (lag.map { String(format: " (acknowledged %.3f s ago)", $0) } ?? ""))
        case "reached":
            try StandardOutput.line("your helper is here")
        case "done":
            try StandardOutput.line("help request \(request.id) done")
        case "cancelled":
            try StandardOutput.line("help request \(request.id) cancelled")
        default:
            break
        }
    }

    // MARK: The helper

    private func help(requestID: Int) async throws {
        let acknowledged = try await client.send("POST", "/v1/help-requests/\(requestID)/acknowledge", Optional<String>.none, as: HelpRequest.self)
        try StandardOutput.line("acknowledged help request \(requestID)" + (acknowledged.name.map { " from \($0)" } ?? "")
                                + (acknowledged.room.map { ", near \($0)" } ?? ""))
        let stream = HelpRequestStream(server: connection.url, token: connection.token, requestID: requestID)
        var reached = false
        try await stream.follow { change in
            switch change.kind {
            case "distance":
                try StandardOutput.line(Self.distanceLine(change.request))
            case "reached":
                reached = true
                try StandardOutput.line("reached the visitor" + (change.request.reachedBy == "ranging" ? " (ranging says immediate)" : ""))
                return false
            case "done", "cancelled":
                try StandardOutput.line("help request \(requestID) \(change.kind)")
                return false
            default:
                break
            }
            return true
        }
        if reached {
            let done = try await client.send("POST", "/v1/help-requests/\(requestID)/done", Optional<String>.none, as: HelpRequest.self)
            try StandardOutput.line("help request \(requestID) \(done.state.rawValue)")
        }
    }

    /// `distance 4.2 m (near), room …, nearest gateway …`
    static func distanceLine(_ request: HelpRequest) -> String {
        var parts: [String] = []
        if let reading = request.helperDistance {
            parts.append("distance " + (reading.distance.map { String(format: "%.2f m", $0) } ?? "unknown") + " (\(reading.proximity))")
        }
        if let room = request.room { parts.append("visitor near \(room)") }
        if let gateway = request.gatewayDistance {
            parts.append("gateway \(gateway.receiverName ?? gateway.receiverID) " + (gateway.distance.map { String(format: "%.1f m", $0) } ?? "?"))
        }
        return parts.joined(separator: ", ")
    }
}
