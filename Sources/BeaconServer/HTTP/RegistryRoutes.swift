import BeaconKit
import Foundation
import Hummingbird

extension ProximaServer {
    struct OrganisationRequest: Decodable {
        var name: String
        var proximityUUIDs: [UUID]
    }

    struct CategoryRequest: Decodable {
        var name: String
    }

    struct StateRequest: Decodable {
        var state: BeaconState
        var installedOn: String?
    }

    func addRegistryRoutes(to router: Router<ProximaRequestContext>) {
        router.get("/v1/organisations") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.organisations())
        }
        router.post("/v1/organisations") { [store] request, context in
            try context.require(.operate)
            let body = try await Self.decode(OrganisationRequest.self, from: request)
            return try Self.json(try await store.createOrganisation(name: body.name, proximityUUIDs: body.proximityUUIDs), status: .created)
        }
        router.get("/v1/categories") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.categories())
        }
        router.put("/v1/categories/:code") { [store] request, context in
            try context.require(.operate)
            let code = try Self.intParameter(context, "code")
            let body = try await Self.decode(CategoryRequest.self, from: request)
            let category = Category(code: code, name: body.name)
            try await store.setCategory(category)
            return try Self.json(category)
        }
        router.get("/v1/sites") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.sites())
        }
        router.post("/v1/sites") { [store] request, context in
            try context.require(.operate)
            return try Self.json(try await store.createSite(try await Self.decode(NewSite.self, from: request)), status: .created)
        }
        router.patch("/v1/sites/:id") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let change = try await Self.decode(SiteChange.self, from: request)
            return try Self.json(try await store.changeSite(id: id, retainEvents: change.retainEvents))
        }
        router.get("/v1/sites/:id/zones") { [store] _, context in
            try context.require(.read)
            let id = try Self.intParameter(context, "id")
            _ = try await store.site(id: id)
            return try Self.json(try await store.zones(siteID: id))
        }
        router.get("/v1/sites/:id/plan-use") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.planUse(siteID: try Self.intParameter(context, "id")))
        }
        router.post("/v1/sites/:id/plan") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let formatName = Self.query(request, "format") ?? "json"
            guard let format = ConfigurationFormat(rawValue: formatName) else {
                throw APIError(.badRequest, field: "format", "expected json, csv, hcitool or advertise, found '\(formatName.prefix(40))'")
            }
            let positions: [PlannedPosition]
            if Self.isCSV(request) {
                positions = try PlannedPosition.parseCSV(try await Self.bodyText(request))
            } else {
                positions = try await Self.decode([PlannedPosition].self, from: request, limit: 4 * 1024 * 1024)
            }
            guard !positions.isEmpty else {
                throw APIError(.unprocessableContent, field: "plan", "the site plan lists no positions")
            }
            let configurations = try await store.configure(siteID: id, plan: positions)
            let contentType = switch format {
            case .json: "application/json"
            case .csv: "text/csv"
            case .hcitool, .advertise: "text/plain"
            }
            return Self.text(try format.render(configurations), contentType: contentType, status: .created)
        }
        router.get("/v1/beacons") { [store] request, context in
            try context.require(.read)
            var siteID: Int?
            if let site = Self.query(request, "site") {
                guard let id = Int(site) else { throw APIError(.badRequest, field: "site", "expected a site id, found '\(site.prefix(40))'") }
                siteID = id
            }
            return try Self.json(try await store.beacons(siteID: siteID))
        }
        router.post("/v1/beacons") { [store] request, context in
            try context.require(.operate)
            return try Self.json(try await store.addBeacon(try await Self.decode(NewBeacon.self, from: request)), status: .created)
        }
        router.patch("/v1/beacons/:id") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await Self.decode(StateRequest.self, from: request)
            return try Self.json(try await store.setBeaconState(id: id, state: body.state, installedOn: body.installedOn))
        }
        router.get("/v1/validation") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.identityConflicts())
        }
        router.get("/v1/resolve") { [store] request, context in
            try context.require(.read)
            let identity = try Self.identity(from: request)
            if let rotated = try await self.resolveRotated(identity) { return try Self.json(rotated) }
            guard let resolved = try await store.resolve(identity) else {
                throw APIError(.notFound, field: "major", "no site has proximity UUID \(identity.uuid.uuidString) with major \(identity.major)")
            }
            return try Self.json(resolved)
        }
        router.get("/v1/organisations/:id/directory") { [store] request, context in
            try context.require(.read)
            guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
                throw APIError(.badRequest, field: "id", "expected an organisation UUID in the path")
            }
            let directory = try await store.directory(organisationID: id)
            if try Self.wantsCSV(request) { return Self.text(directory.csv(), contentType: "text/csv") }
            return try Self.json(directory)
        }
        router.put("/v1/directory") { [store] request, context in
            try context.require(.operate)
            let directory: Directory
            if Self.isCSV(request) {
                guard let text = Self.query(request, "organisation"), let id = UUID(uuidString: text),
                      let organisation = try await store.organisations().first(where: { $0.id == id }) else {
                    throw APIError(.badRequest, field: "organisation", "a CSV directory needs ?organisation=<UUID> of an existing organisation")
                }
                directory = try Directory.parseCSV(try await Self.bodyText(request), organisation: organisation)
            } else {
                // The JSON body names its organisation; a query naming another is refused, not ignored.
                if let text = Self.query(request, "organisation") {
                    guard UUID(uuidString: text) != nil else {
                        throw APIError(.badRequest, field: "organisation", "expected an organisation id (a UUID), found '\(text.prefix(40))'")
                    }
                }
                directory = try await Self.decode(Directory.self, from: request, limit: 8 * 1024 * 1024)
                if let text = Self.query(request, "organisation"), UUID(uuidString: text) != directory.organisation.id {
                    throw APIError(.badRequest, field: "organisation", "the query names \(text.prefix(40)) but the body's organisation is \(directory.organisation.id.uuidString)")
                }
            }
            try await store.importDirectory(directory)
            return try Self.json(try await store.directory(organisationID: directory.organisation.id))
        }
    }

    static func identity(from request: Request) throws -> BeaconIdentity {
        guard let uuidText = query(request, "uuid"), let uuid = UUID(uuidString: uuidText) else {
            throw APIError(.badRequest, field: "uuid", "expected ?uuid=<proximity UUID>")
        }
        func number(_ name: String) throws -> UInt16 {
            guard let text = query(request, name), let value = UInt16(text) else {
                throw APIError(.badRequest, field: name, "expected ?\(name)=<0…65535>, found '\(query(request, name)?.prefix(20) ?? "")'")
            }
            return value
        }
        return BeaconIdentity(uuid: uuid, major: try number("major"), minor: try number("minor"))
    }
}
