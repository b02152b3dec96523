import BeaconWallet
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat

/// Apple's pass web service ("Wallet Passes Web Service Reference"), which Wallet calls at the
/// pass's `webServiceURL`: under its own prefix, so its `/v1/…` paths never meet Proxima's.
extension ProximaServer {
    public static let walletPrefix = "/wallet"

    struct PushTokenBody: Decodable {
        var pushToken: String
    }

    struct LogBody: Decodable {
        var logs: [String]
    }

    struct SerialNumbers: Encodable {
        var serialNumbers: [String]
        /// A string: Wallet ignores a number here.
        var lastUpdated: String
    }

    func addWalletRoutes(to router: Router<ProximaRequestContext>) {
        let limits = configuration.passes?.limits ?? PassLimits()
        let prefix = Self.walletPrefix + "/v1"
        let registration = prefix + "/devices/:deviceLibraryIdentifier/registrations/:passTypeIdentifier/:serialNumber"
        router.post(RouterPath(registration)) { [store] request, context in
            let (device, passType, serial) = try Self.registrationParameters(context)
            _ = try await self.authorizePass(request, passType: passType, serial: serial)
            // After the pass's own token: a request without one learns nothing of the configuration.
            _ = try self.passConfiguration()
            let body = try await Self.decode(PushTokenBody.self, from: request, limit: 4 * 1024)
            try Self.checkIdentifier(body.pushToken, field: "pushToken")
            let created = try await store.registerDevice(
                PassRegistration(deviceLibraryIdentifier: device, passTypeIdentifier: passType, serial: serial, pushToken: body.pushToken),
                limits: limits, now: self.clock())
            return Response(status: created ? .created : .ok)
        }
        router.delete(RouterPath(registration)) { [store] request, context in
            let (device, passType, serial) = try Self.registrationParameters(context)
            _ = try await self.authorizePass(request, passType: passType, serial: serial)
            // After the pass's own token: a request without one learns nothing of the configuration.
            _ = try self.passConfiguration()
            _ = try await store.unregisterDevice(deviceLibraryIdentifier: device, passTypeIdentifier: passType, serial: serial)
            return Response(status: .ok)
        }
        router.get(RouterPath(prefix + "/devices/:deviceLibraryIdentifier/registrations/:passTypeIdentifier")) { [store] request, context in
            _ = try self.passConfiguration()
            let device = try Self.identifierParameter(context, "deviceLibraryIdentifier", field: "deviceLibraryIdentifier")
            let passType = try Self.identifierParameter(context, "passTypeIdentifier", field: "passTypeIdentifier")
            var since: Int?
            if let text = Self.query(request, "passesUpdatedSince"), !text.isEmpty {
                guard let tag = Int(text), tag >= 0 else {
                    throw APIError(.badRequest, field: "passesUpdatedSince", "expected a tag this server gave as lastUpdated, found '\(text.prefix(40))'")
                }
                since = tag
            }
            guard let updated = try await store.updatedSerials(deviceLibraryIdentifier: device, passTypeIdentifier: passType, since: since) else {
                return Response(status: .noContent)
            }
            return try Self.json(SerialNumbers(serialNumbers: updated.serials, lastUpdated: String(updated.lastUpdated)))
        }
        router.get(RouterPath(prefix + "/passes/:passTypeIdentifier/:serialNumber")) { [store] request, context in
            let passType = try Self.identifierParameter(context, "passTypeIdentifier", field: "passTypeIdentifier")
            let serial = try Self.identifierParameter(context, "serialNumber", field: "serialNumber")
            let stored = try await self.authorizePass(request, passType: passType, serial: serial)
            let passes = try self.passConfiguration()
            if let header = request.headers[.ifModifiedSince], let since = HTTPDate.parse(header),
               stored.pass.updatedAt.rounded(.down) <= since {
                return Response(status: .notModified, headers: [.lastModified: HTTPDate.format(stored.pass.updatedAt)])
            }
            let data = try Self.signedPass(template: try await store.passTemplate(siteID: stored.pass.siteID), stored: stored, configuration: passes)
            return Self.passResponse(data, pass: stored.pass)
        }
        router.post(RouterPath(prefix + "/log")) { request, _ in
            _ = try self.passConfiguration()
            let body = try await Self.decode(LogBody.self, from: request, limit: limits.logEntries * (limits.logEntryLength + 16) + 1024)
            guard body.logs.count <= limits.logEntries else {
                throw APIError(.contentTooLarge, field: "logs", "expected at most \(limits.logEntries) entries, found \(body.logs.count)")
            }
            // Logged, not stored: these are Wallet's diagnostics about this web service.
            for entry in body.logs {
                let text = String(entry.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(limits.logEntryLength))
                self.logger.notice("Wallet log", metadata: ["entry": .string(text)])
            }
            return Response(status: .ok)
        }
    }

    /// The pass named in the path, when the request carries its `Authorization: ApplePass
    /// <authenticationToken>`. An unknown pass is answered like a wrong token (401), so the
    /// service does not tell which serials exist.
    func authorizePass(_ request: Request, passType: String, serial: String) async throws -> StoredPass {
        let header = request.headers[.authorization] ?? ""
        let token = header.hasPrefix("ApplePass ") ? String(header.dropFirst("ApplePass ".count)).trimmingCharacters(in: .whitespaces) : ""
        guard !token.isEmpty, token.utf8.count <= 200,
              let stored = try await store.storedPass(serial: serial), stored.pass.passTypeIdentifier == passType,
              Self.constantTimeEqual(stored.authenticationToken, token) else {
            var error = APIError(.unauthorized, field: "Authorization",
                                 "expected 'Authorization: ApplePass <authenticationToken>' with the token of pass \(serial.prefix(80))")
            error.headers[.wwwAuthenticate] = "ApplePass"
            throw error
        }
        return stored
    }

    static func constantTimeEqual(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8), b = Array(right.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    static func registrationParameters(_ context: ProximaRequestContext) throws -> (device: String, passType: String, serial: String) {
        (try identifierParameter(context, "deviceLibraryIdentifier", field: "deviceLibraryIdentifier"),
         try identifierParameter(context, "passTypeIdentifier", field: "passTypeIdentifier"),
         try identifierParameter(context, "serialNumber", field: "serialNumber"))
    }

    static func identifierParameter(_ context: ProximaRequestContext, _ name: String, field: String) throws -> String {
        let text = context.parameters.get(name) ?? ""
        try checkIdentifier(text, field: field)
        return text
    }

    /// Identifiers Wallet sends are letters, digits and `.`, `-`, `_`, at most 200 characters.
    static func checkIdentifier(_ text: String, field: String) throws {
        guard !text.isEmpty, text.utf8.count <= 200,
              text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }) else {
            throw APIError(.badRequest, field: field, "expected 1…200 letters, digits, '.', '-' or '_', found '\(text.prefix(40))'")
        }
    }
}
