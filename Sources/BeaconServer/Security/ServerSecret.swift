import BeaconRotation
import Crypto
import Foundation

/// The key the server seals stored secrets with (`--secret-key-file`): 32 bytes, in the file as
/// 64 hex digits, as base64, or raw. Rotation keys are stored as AES-256-GCM boxes bound to
/// their beacon, so a copy of the database alone reveals no key, and a box moved to another
/// beacon's row fails to open.
public struct ServerSecret: Sendable {
    private let key: SymmetricKey

    public init(bytes: [UInt8], field: String = "--secret-key-file") throws(RotationInputError) {
        guard bytes.count == 32 else {
            throw RotationInputError(field: field, reason: "expected a 32-byte key (64 hex digits, base64 or 32 raw bytes), found \(bytes.count) bytes")
        }
        key = SymmetricKey(data: bytes)
    }

    /// Reads the file's contents: trimmed text as hex or base64, else the raw bytes.
    public init(fileContents data: Data, field: String = "--secret-key-file") throws(RotationInputError) {
        if let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            if text.utf8.count == 64, let key = try? RotationKey(parsing: text), key.bytes.count == 32 {
                try self.init(bytes: key.bytes, field: field)
                return
            }
            if let decoded = Data(base64Encoded: text), decoded.count == 32 {
                try self.init(bytes: Array(decoded), field: field)
                return
            }
        }
        try self.init(bytes: Array(data), field: field)
    }

    public static func load(path: String) throws(RotationInputError) -> ServerSecret {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw RotationInputError(field: "--secret-key-file", reason: "cannot read \(path): \(error.localizedDescription)")
        }
        return try ServerSecret(fileContents: data)
    }

    /// AES-GCM's combined form (nonce, ciphertext, tag) of `plaintext`, bound to `context`.
    func seal(_ plaintext: [UInt8], context: String) throws -> Data {
        guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8)).combined else {
            throw RegistryError(.invalid, field: "key", "AES-GCM gave no combined box")
        }
        return combined
    }

    func open(_ box: Data, context: String) throws -> [UInt8] {
        do {
            return Array(try AES.GCM.open(try AES.GCM.SealedBox(combined: box), using: key, authenticating: Data(context.utf8)))
        } catch {
            throw RegistryError(.invalid, field: "key", "the stored rotation key (\(context)) does not open with this server's --secret-key-file: \(error)")
        }
    }
}
