import BeaconWallet
import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat

extension ProximaServer {
    struct MinorRequest: Decodable {
        var minor: Int
    }

    /// The signing identity, or 503 saying how to configure one.
    func passConfiguration() throws -> PassServiceConfiguration {
        guard let passes = configuration.passes else {
            throw APIError(.serviceUnavailable, field: "passes",
                "this server signs no passes: start proxima serve with --pass-cert, --pass-key, --pass-wwdr and --public-url")
        }
        return passes
    }

    func addPassRoutes(to router: Router<ProximaRequestContext>) {
        let limits = configuration.passes?.limits ?? PassLimits()
        router.put("/v1/sites/:id/pass-template") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await request.body.collect(upTo: limits.templateBytes * 4 / 3 + limits.passJSONBytes + 4096)
            let template = try PassTemplateInput.parse(Data(buffer: body), siteID: id, limits: limits, now: self.clock())
            return try Self.templateResponse(try await store.setPassTemplate(template))
        }
        router.get("/v1/sites/:id/pass-template") { [store] _, context in
            try context.require(.read)
            return try Self.templateResponse(try await store.passTemplate(siteID: try Self.intParameter(context, "id")))
        }
        router.post("/v1/sites/:id/passes") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let passes = try self.passConfiguration()
            let body = try await Self.decode(NewPass.self, from: request, limit: 16 * 1024)
            let visitor = body.visitor.trimmingCharacters(in: .whitespaces)
            guard !visitor.isEmpty, visitor.count <= limits.visitorLength else {
                throw APIError(.unprocessableContent, field: "visitor", "expected 1…\(limits.visitorLength) characters, found \(visitor.count)")
            }
            try NameText.check(visitor, field: "visitor")
            let template = try await store.passTemplate(siteID: id)
            let beacons = try await store.passBeacons(siteID: id, zones: body.zones)
            let now = self.clock()
            let pass = IssuedPass(serial: PassIssuer.newSerial(), siteID: id, passTypeIdentifier: template.passTypeIdentifier, visitor: visitor,
                                  version: 1, updateTag: 0, createdAt: now, updatedAt: now, beacons: beacons)
            let stored = StoredPass(pass: pass, authenticationToken: PassIssuer.newAuthenticationToken())
            // Signed before it is stored, so a template that cannot make a valid pass stores nothing.
            _ = try Self.signedPass(template: template, stored: stored, configuration: passes)
            let issued = try await store.insertPass(stored, limits: limits)
            return try Self.json(PassIssued(pass: issued, download: "/v1/sites/\(id)/passes/\(issued.serial)"), status: .created)
        }
        router.get("/v1/sites/:id/passes") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.issuedPasses(siteID: try Self.intParameter(context, "id")))
        }
        router.get("/v1/sites/:id/passes/:serial") { [store] _, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let passes = try self.passConfiguration()
            let serial = context.parameters.get("serial") ?? ""
            let issued = try await store.issuedPass(siteID: id, serial: serial)
            guard let stored = try await store.storedPass(serial: issued.serial) else {
                throw APIError(.notFound, field: "serial", "site \(id) has no pass \(serial.prefix(80))")
            }
            let data = try Self.signedPass(template: try await store.passTemplate(siteID: id), stored: stored, configuration: passes)
            return Self.passResponse(data, pass: stored.pass)
        }
        router.put("/v1/zones/:id/minor") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await Self.decode(MinorRequest.self, from: request, limit: 1024)
            guard let minor = UInt16(exactly: body.minor) else {
                throw APIError(.badRequest, field: "minor", "expected a minor in 0…65535, found \(body.minor)")
            }
            return try Self.json(try await store.renumberZone(id: id, minor: minor, now: self.clock()))
        }
    }

    static func signedPass(template: PassTemplate, stored: StoredPass, configuration: PassServiceConfiguration) throws -> Data {
        do {
            return try PassIssuer.package(template: template, pass: stored, configuration: configuration)
        } catch {
            throw APIError(.unprocessableContent, field: "template.\(error.field)", "the site's pass template cannot make a valid pass: \(error.reason)")
        }
    }

    static func passResponse(_ data: Data, pass: IssuedPass) -> Response {
        Response(status: .ok, headers: [.contentType: "application/vnd.apple.pkpass",
                                        .lastModified: HTTPDate.format(pass.updatedAt),
                                        .contentDisposition: "attachment; filename=\"\(pass.serial).pkpass\""],
                 body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }

    static func templateResponse(_ template: PassTemplate) throws -> Response {
        let pass = (try? JSONSerialization.jsonObject(with: template.passJSON)) ?? [String: Any]()
        let object: [String: Any] = [
            "siteID": template.siteID,
            "pass": pass,
            "images": template.images.mapValues { $0.base64EncodedString() },
            "updatedAt": template.updatedAt,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate), whole seconds, for Last-Modified and If-Modified-Since.
enum HTTPDate {
    static func format(_ seconds: Double) -> String {
        formatter().string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
    }

    static func parse(_ text: String) -> Double? {
        formatter().date(from: text.trimmingCharacters(in: .whitespaces))?.timeIntervalSince1970
    }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
