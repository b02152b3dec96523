import Foundation

/// `mqtt://user:pass@host:1883/prefix` or `mqtts://…` (TLS, port 8883 by default): where the
/// broker is, who to log in as, and the topic prefix everything is published under.
public struct MQTTBrokerURL: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var useTLS: Bool
    public var username: String?
    public var password: String?
    /// The topic prefix without leading or trailing slashes, e.g. `proxima` or `site/north`.
    public var prefix: String

    public static let defaultPrefix = "proxima"

    public init(host: String, port: Int = 1883, useTLS: Bool = false, username: String? = nil,
                password: String? = nil, prefix: String = MQTTBrokerURL.defaultPrefix) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.username = username
        self.password = password
        self.prefix = prefix
    }

    /// Parses the URL; every refusal names the part of the URL at fault.
    public init(parsing text: String) throws(MQTTURLError) {
        guard let components = URLComponents(string: text) else {
            throw MQTTURLError(part: "URL", reason: "'\(text.prefix(120))' is not a URL")
        }
        switch components.scheme?.lowercased() {
        case "mqtt": useTLS = false
        case "mqtts": useTLS = true
        default: throw MQTTURLError(part: "scheme", reason: "expected mqtt:// or mqtts://, found '\(components.scheme ?? "")'")
        }
        guard let host = components.host, !host.isEmpty else {
            throw MQTTURLError(part: "host", reason: "expected a broker host, as in mqtt://127.0.0.1:1883/proxima")
        }
        self.host = host
        if let port = components.port {
            guard (1...65535).contains(port) else { throw MQTTURLError(part: "port", reason: "expected 1…65535, found \(port)") }
            self.port = port
        } else {
            port = useTLS ? 8883 : 1883
        }
        username = components.user.flatMap { $0.isEmpty ? nil : $0 }
        password = components.password
        if password != nil && username == nil {
            throw MQTTURLError(part: "user", reason: "MQTT 3.1.1 sends a password only with a user name")
        }
        let path = components.path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        let prefix = path.isEmpty ? Self.defaultPrefix : path
        guard !prefix.contains(where: { $0 == "+" || $0 == "#" }) else {
            throw MQTTURLError(part: "path", reason: "the topic prefix must not contain the wildcards + or #, found '\(prefix.prefix(80))'")
        }
        guard components.query == nil, components.fragment == nil else {
            throw MQTTURLError(part: "query", reason: "an MQTT URL takes no ?query or #fragment")
        }
        self.prefix = prefix
    }

    /// The URL without its password, for logs.
    public var description: String {
        "\(useTLS ? "mqtts" : "mqtt")://\(username.map { "\($0)@" } ?? "")\(host):\(port)/\(prefix)"
    }
}

public struct MQTTURLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var part: String
    public var reason: String
    public var description: String { "MQTT URL \(part): \(reason)" }
}
