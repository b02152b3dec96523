import Foundation

extension Webhook {
    static let redactedMark = "redacted"

    /// The webhook as a non-admin may see it: receivers often carry credentials in the URL
    /// (`https://user:password@host/…`, `?token=…`), so the user, password, query values and
    /// fragment are replaced; the scheme, host, port and path still say where events go.
    var redacted: Webhook {
        guard var components = URLComponents(string: url) else {
            return Webhook(id: id, url: Self.redactedMark, siteID: siteID)
        }
        if components.user != nil { components.user = Self.redactedMark }
        if components.password != nil { components.password = Self.redactedMark }
        if let items = components.queryItems {
            components.queryItems = items.map { URLQueryItem(name: $0.name, value: $0.value == nil ? nil : Self.redactedMark) }
        }
        if components.fragment != nil { components.fragment = Self.redactedMark }
        return Webhook(id: id, url: components.string ?? Self.redactedMark, siteID: siteID)
    }
}
