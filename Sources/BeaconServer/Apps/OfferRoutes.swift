import Foundation
import Hummingbird

extension ProximaServer {
    func addOfferRoutes(to router: Router<ProximaRequestContext>) {
        router.post("/v1/offers") { [store] request, context in
            try context.require(.operate)
            let body = try await Self.decode(NewOffer.self, from: request, limit: 16 * 1024)
            return try Self.json(try await store.createOffer(body, now: self.clock()), status: .created)
        }
        router.get("/v1/offers") { [store] request, context in
            try context.require(.read)
            return try Self.json(try await store.offers(siteID: try Self.optionalIntQuery(request, "site"), zoneID: try Self.optionalIntQuery(request, "zone")))
        }
        router.get("/v1/offers/:id") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.offer(id: try Self.intParameter(context, "id")))
        }
        router.put("/v1/offers/:id") { [store] request, context in
            try context.require(.operate)
            let id = try Self.intParameter(context, "id")
            let body = try await Self.decode(NewOffer.self, from: request, limit: 16 * 1024)
            return try Self.json(try await store.replaceOffer(id: id, with: body, now: self.clock()))
        }
        router.delete("/v1/offers/:id") { [store] _, context in
            try context.require(.operate)
            try await store.deleteOffer(id: try Self.intParameter(context, "id"))
            return Response(status: .noContent)
        }
        router.get("/v1/offer-settings/:site") { [store] _, context in
            try context.require(.read)
            return try Self.json(try await store.offerSettings(siteID: try Self.intParameter(context, "site")))
        }
        router.put("/v1/offer-settings/:site") { [store] request, context in
            try context.require(.operate)
            let site = try Self.intParameter(context, "site")
            let body = try await Self.decode(OfferSettings.self, from: request, limit: 4 * 1024)
            return try Self.json(try await store.setOfferSettings(siteID: site, body))
        }
        router.get("/v1/devices/:id/offers") { [store] _, context in
            let id = try Self.deviceID(context)
            try context.requireDeviceAccess(id, operatorsNeed: .read)
            _ = try await store.device(id: id)
            return try Self.json(try await store.deviceOffers(deviceID: id))
        }
    }
}
