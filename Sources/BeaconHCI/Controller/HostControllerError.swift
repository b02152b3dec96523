import BeaconKit

/// Why a command to the controller did not succeed, or why the controller stopped answering.
public enum HostControllerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The controller answered with a status other than Success.
    case commandFailed(opcode: HCIOpcode, status: HCIStatus)
    /// No Command Complete or Command Status for the opcode arrived in time. `ignoredReplies`
    /// lists replies that did arrive meanwhile but for other opcodes.
    case timedOut(opcode: HCIOpcode, after: Duration, ignoredReplies: [HCIOpcode])
    /// The link to the controller broke or closed; the message says how.
    case linkFailed(String)
    /// The controller sent an event Proxima cannot read.
    case malformedEvent(DecodeError)

    public var description: String {
        switch self {
        case .commandFailed(let opcode, let status):
            return "\(opcode) failed: the controller answered \(status)"
        case .timedOut(let opcode, let after, let ignored):
            var text = "\(opcode) timed out: no Command Complete or Command Status within \(after)"
            if !ignored.isEmpty {
                text += "; replies arrived only for other commands: " + ignored.map(\.description).joined(separator: ", ")
            }
            return text
        case .linkFailed(let message):
            return "controller link failed: \(message)"
        case .malformedEvent(let error):
            return "malformed HCI event from the controller: \(error)"
        }
    }

    /// The HCI status when the controller refused the command.
    public var status: HCIStatus? {
        if case .commandFailed(_, let status) = self { return status }
        return nil
    }
}

/// How the controller acknowledged a command.
public enum CommandReply: Sendable, Hashable {
    case complete(CommandComplete)
    case status(CommandStatus)

    public var opcode: HCIOpcode {
        switch self {
        case .complete(let complete): complete.opcode
        case .status(let status): status.opcode
        }
    }

    /// Return parameters after the status byte (empty for Command Status).
    public var returnParameters: [UInt8] {
        if case .complete(let complete) = self { return Array(complete.returnParameters.dropFirst()) }
        return []
    }
}
