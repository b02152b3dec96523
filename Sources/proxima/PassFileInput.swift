import BeaconGateway
import BeaconWallet
import Foundation
import X509

/// Files an operator names on the `proxima pass` command line, read with bounds and errors that
/// name the option.
enum PassFileInput {
    static let maximumBytes = PassPackage.maximumBytes

    static func data(_ path: String, field: String) throws(PassError) -> Data {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            throw PassError(field, "\(path) cannot be read")
        }
        if let size = attributes[.size] as? NSNumber, size.intValue > maximumBytes {
            throw PassError(field, "\(path) is \(size.intValue) bytes; at most \(maximumBytes) are read")
        }
        guard let contents = FileManager.default.contents(atPath: path) else { throw PassError(field, "\(path) cannot be read") }
        return contents
    }

    static func text(_ path: String, field: String) throws(PassError) -> String {
        let contents = try data(path, field: field)
        // A DER or PKCS#12 file is binary; PassSigningIdentity names the conversion for it.
        return String(data: contents, encoding: .utf8) ?? String(decoding: contents.prefix(1), as: UTF8.self)
    }

    static func object(_ data: Data, field: String) throws(PassError) -> [String: Any] {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw PassError(field, "must be a JSON object")
        }
        return object
    }

    /// Every certificate of a PEM file (a root, or a bundle of them).
    static func certificates(_ path: String, field: String) throws(PassError) -> [Certificate] {
        let pem = try text(path, field: field)
        let blocks = pem.components(separatedBy: "-----END CERTIFICATE-----").dropLast()
            .map { $0 + "-----END CERTIFICATE-----" }
        guard !blocks.isEmpty else { throw PassError(field, "\(path) holds no PEM certificate") }
        var certificates: [Certificate] = []
        for (index, block) in blocks.enumerated() {
            do {
                certificates.append(try Certificate(pemEncoded: block.trimmingCharacters(in: .whitespacesAndNewlines)))
            } catch {
                throw PassError(field, "certificate \(index + 1) of \(path): \(error)")
            }
        }
        return certificates
    }
}

extension PassBeacon {
    static func read(file path: String) throws(PassError) -> [PassBeacon] {
        do {
            return try parse(try PassFileInput.data(path, field: "--beacons"), limit: PassValidation.maximumBeacons)
        } catch {
            throw PassError("--beacons \(error.field)", error.reason)
        }
    }

    private struct ListedBeacon: Decodable {
        var uuid: UUID
        var major: UInt16
        var minor: UInt16
        var state: String
    }

    /// The site's deployed beacons, from the server's registry.
    static func deployed(site: Int, server: String, token: String) async throws -> [PassBeacon] {
        guard let base = URL(string: server), let scheme = base.scheme, ["http", "https"].contains(scheme) else {
            throw PassError("--server", "expected an http:// or https:// URL, found \"\(server)\"")
        }
        let client = ServerJSONClient(base: base, token: token, timeout: .seconds(30))
        let listed: [ListedBeacon]
        do {
            listed = try JSONDecoder().decode([ListedBeacon].self, from: try await client.data("GET", "/v1/beacons?site=\(site)"))
        } catch {
            throw PassError("--site", "the beacons of site \(site) could not be read from \(server): \(error)")
        }
        let deployed = listed.filter { $0.state == "deployed" }
        guard !deployed.isEmpty else { throw PassError("--site", "site \(site) has no deployed beacon") }
        return deployed.map { PassBeacon(proximityUUID: $0.uuid, major: $0.major, minor: $0.minor) }
    }
}
