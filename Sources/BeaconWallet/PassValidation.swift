import Foundation

/// Checks pass.json against the rules of Apple's "Wallet Pass Package Format" reference (the
/// PassKit Package Format Reference): the keys every pass needs, one style, at most 10 beacons and
/// 10 locations (Wallet ignores the rest, so more is an error here rather than a silent loss),
/// web service URL and token together, colours as `rgb(r, g, b)`.
public enum PassValidation {
    public static let maximumBeacons = 10
    public static let maximumLocations = 10
    public static let minimumAuthenticationTokenLength = 16
    public static let styles = ["boardingPass", "coupon", "eventTicket", "generic", "storeCard"]
    static let transitTypes = ["PKTransitTypeAir", "PKTransitTypeBoat", "PKTransitTypeBus", "PKTransitTypeGeneric", "PKTransitTypeTrain"]

    /// Parses and checks pass.json; returns its top-level object.
    @discardableResult
    public static func validate(passJSON data: Data) throws(PassError) -> [String: Any] {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PassError("pass.json", "not JSON: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)")")
        }
        guard let pass = parsed as? [String: Any] else { throw PassError("pass.json", "must be a JSON object") }
        try validate(pass: pass)
        return pass
    }

    public static func validate(pass: [String: Any]) throws(PassError) {
        for key in ["description", "organizationName", "passTypeIdentifier", "serialNumber", "teamIdentifier"] {
            guard let value = pass[key] else { throw PassError(key, "required") }
            guard let text = value as? String, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw PassError(key, "must be a non-empty string")
            }
        }
        guard let version = pass["formatVersion"] else { throw PassError("formatVersion", "required") }
        guard let number = version as? NSNumber, !isBoolean(number), number.doubleValue == 1 else {
            throw PassError("formatVersion", "must be the number 1")
        }
        let present = styles.filter { pass[$0] != nil }
        guard present.count == 1 else {
            throw PassError(present.count > 1 ? present[1] : "style", present.isEmpty
                ? "one of \(styles.joined(separator: ", ")) is required"
                : "a pass has exactly one style; \(present.joined(separator: " and ")) found")
        }
        guard let style = pass[present[0]] as? [String: Any] else { throw PassError(present[0], "must be an object") }
        if present[0] == "boardingPass" {
            guard let transit = style["transitType"] as? String else { throw PassError("boardingPass.transitType", "required for a boarding pass") }
            guard transitTypes.contains(transit) else {
                throw PassError("boardingPass.transitType", "must be one of \(transitTypes.joined(separator: ", "))")
            }
        }
        try validateBeacons(pass["beacons"])
        try validateLocations(pass["locations"])
        if let date = pass["relevantDate"] {
            guard let text = date as? String, parseDate(text) != nil else {
                throw PassError("relevantDate", "must be an ISO 8601 date with a time and time zone, such as 2026-11-24T18:30:00+01:00")
            }
        }
        try validateWebService(url: pass["webServiceURL"], token: pass["authenticationToken"])
        for key in ["foregroundColor", "backgroundColor", "labelColor"] {
            if let value = pass[key] {
                guard let text = value as? String, parseColour(text) != nil else {
                    throw PassError(key, "must be rgb(r, g, b) with each value from 0 to 255")
                }
            }
        }
    }

    static func validateBeacons(_ value: Any?) throws(PassError) {
        guard let value else { return }
        guard let beacons = value as? [Any] else { throw PassError("beacons", "must be an array") }
        if beacons.count > maximumBeacons {
            throw PassError("beacons[\(maximumBeacons)]", "a pass carries at most \(maximumBeacons) beacons; Wallet ignores the rest")
        }
        for (index, entry) in beacons.enumerated() {
            let path = "beacons[\(index)]"
            guard let beacon = entry as? [String: Any] else { throw PassError(path, "must be an object") }
            guard let uuid = beacon["proximityUUID"] else { throw PassError("\(path).proximityUUID", "required") }
            guard let text = uuid as? String, UUID(uuidString: text) != nil else {
                throw PassError("\(path).proximityUUID", "must be a UUID such as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
            }
            for key in ["major", "minor"] {
                if let number = beacon[key] {
                    guard let number = number as? NSNumber, !isBoolean(number), number.doubleValue == number.doubleValue.rounded(),
                          (0...65_535).contains(number.doubleValue) else {
                        throw PassError("\(path).\(key)", "must be an integer from 0 to 65535")
                    }
                }
            }
            if beacon["minor"] != nil && beacon["major"] == nil {
                throw PassError("\(path).minor", "a minor needs a major")
            }
            if let text = beacon["relevantText"], !(text is String) { throw PassError("\(path).relevantText", "must be a string") }
        }
    }

    static func validateLocations(_ value: Any?) throws(PassError) {
        guard let value else { return }
        guard let locations = value as? [Any] else { throw PassError("locations", "must be an array") }
        if locations.count > maximumLocations {
            throw PassError("locations[\(maximumLocations)]", "a pass carries at most \(maximumLocations) locations; Wallet ignores the rest")
        }
        for (index, entry) in locations.enumerated() {
            let path = "locations[\(index)]"
            guard let location = entry as? [String: Any] else { throw PassError(path, "must be an object") }
            for (key, range) in [("latitude", -90.0...90.0), ("longitude", -180.0...180.0)] {
                guard let number = location[key] as? NSNumber, !isBoolean(number), range.contains(number.doubleValue) else {
                    throw PassError("\(path).\(key)", "required, a number from \(Int(range.lowerBound)) to \(Int(range.upperBound))")
                }
            }
            if let altitude = location["altitude"] {
                guard let number = altitude as? NSNumber, !isBoolean(number), number.doubleValue.isFinite else {
                    throw PassError("\(path).altitude", "must be a number of metres")
                }
            }
        }
    }

    static func validateWebService(url: Any?, token: Any?) throws(PassError) {
        switch (url, token) {
        case (nil, nil):
            return
        case (nil, _):
            throw PassError("webServiceURL", "required when authenticationToken is given")
        case (_, nil):
            throw PassError("authenticationToken", "required when webServiceURL is given")
        case (let url?, let token?):
            guard let text = url as? String, let parsed = URL(string: text), let scheme = parsed.scheme?.lowercased(),
                  let host = parsed.host, !host.isEmpty else {
                throw PassError("webServiceURL", "must be an absolute URL")
            }
            // Wallet only talks HTTPS, except to a development server when the device allows it.
            guard scheme == "https" || (scheme == "http" && ["localhost", "127.0.0.1", "::1"].contains(host)) else {
                throw PassError("webServiceURL", "must use https (http only for localhost, in development)")
            }
            guard let secret = token as? String, secret.count >= minimumAuthenticationTokenLength else {
                throw PassError("authenticationToken", "must be a string of at least \(minimumAuthenticationTokenLength) characters")
            }
        }
    }

    /// The W3C profile of ISO 8601 that Wallet reads: a date, a time and a zone, seconds optional.
    public static func parseDate(_ text: String) -> Date? {
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mmXXXXX"
        return formatter.date(from: text)
    }

    public static func parseColour(_ text: String) -> (red: Int, green: Int, blue: Int)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("rgb("), trimmed.hasSuffix(")") else { return nil }
        let parts = trimmed.dropFirst(4).dropLast().split(separator: ",", omittingEmptySubsequences: false)
            .map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 3, parts.allSatisfy({ $0 != nil && (0...255).contains($0!) }) else { return nil }
        return (parts[0]!, parts[1]!, parts[2]!)
    }

    /// JSONSerialization gives booleans as NSNumber too; `true` is not a version or a major.
    static func isBoolean(_ number: NSNumber) -> Bool {
        // Foundation on Linux has no boolean subclass of NSNumber; a boolean's type code is "c"
        // (JSON has no 8-bit integers, so nothing else read from JSON has it).
        String(cString: number.objCType) == "c"
    }
}
