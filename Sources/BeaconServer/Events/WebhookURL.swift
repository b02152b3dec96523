import Foundation

/// What a webhook URL may be: http or https, an optional user and password, a host of letters,
/// digits, dots and hyphens (a DNS name or an IPv4 address), a port of 0…65535, and a path,
/// query and fragment of RFC 3986's characters with `%` only before two hex digits. openapi.yaml
/// states the same pattern (a test compares them), so the document refuses exactly what the
/// server refuses; Foundation's URL parser takes every URL it matches.
enum WebhookURL {
    static let pattern = #"^https?://(([A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@)?[A-Za-z0-9.-]+(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])?)?([/?#]([A-Za-z0-9._~!$&'()*+,;=:@/?#-]|%[0-9A-Fa-f]{2})*)?$"#
    static let maxLength = 2048

    static func check(_ url: String) throws {
        guard url.utf8.count <= maxLength, let regex = try? Regex(pattern), url.wholeMatch(of: regex) != nil,
              let parsed = URL(string: url), parsed.host?.isEmpty == false else {
            throw RegistryError(.invalid, field: "url", "expected an http:// or https:// URL of at most \(maxLength) characters: "
                                + "host of letters, digits, '.' and '-', then a path of RFC 3986 characters; found '\(url.prefix(200))'")
        }
    }
}
