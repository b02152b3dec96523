import BeaconWallet
import Foundation

/// Reads the body of `PUT /v1/sites/{id}/pass-template`:
/// `{"pass": {pass.json without the per-pass keys}, "images": {"icon.png": "<base64>", …}}`.
/// Every refusal names the field (`pass.formatVersion`, `images.logo.png`).
enum PassTemplateInput {
    /// Keys the server writes into each pass; a template that sets them is refused rather than
    /// silently overwritten.
    static let perPassKeys = ["serialNumber", "beacons", "webServiceURL", "authenticationToken"]
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func parse(_ body: Data, siteID: Int, limits: PassLimits, now: Double) throws(RegistryError) -> PassTemplate {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: body)
        } catch {
            throw RegistryError(.invalid, field: "body", "expected a JSON object with pass and images, found text that is not JSON")
        }
        guard let object = parsed as? [String: Any] else {
            throw RegistryError(.invalid, field: "body", "expected a JSON object with pass and images")
        }
        if let unknown = object.keys.sorted().first(where: { !["pass", "images"].contains($0) }) {
            throw RegistryError(.invalid, field: unknown, "unknown key; a template has pass and images")
        }
        guard let pass = object["pass"] as? [String: Any] else {
            throw RegistryError(.invalid, field: "pass", "required, the pass.json object without \(perPassKeys.joined(separator: ", "))")
        }
        let passJSON = try checkPass(pass, limits: limits)
        guard let imageObject = object["images"] as? [String: Any] else {
            throw RegistryError(.invalid, field: "images", "required, an object of file name to base64 PNG, with icon.png")
        }
        let images = try checkImages(imageObject, limits: limits)
        return PassTemplate(siteID: siteID, passJSON: passJSON, images: images, updatedAt: now)
    }

    static func checkPass(_ pass: [String: Any], limits: PassLimits) throws(RegistryError) -> Data {
        if let key = perPassKeys.first(where: { pass[$0] != nil }) {
            throw RegistryError(.invalid, field: "pass.\(key)", "set by the server for each pass; leave it out of the template")
        }
        // Validated as a real pass would be, with stand-ins for what the server adds.
        var trial = pass
        trial["serialNumber"] = "template-check"
        trial["webServiceURL"] = "https://proxima.invalid/wallet"
        trial["authenticationToken"] = String(repeating: "x", count: PassValidation.minimumAuthenticationTokenLength)
        do {
            try PassValidation.validate(pass: trial)
        } catch {
            throw RegistryError(.invalid, field: "pass.\(error.field)", error.reason)
        }
        let data: Data
        do {
            data = try JSONSerialization.data(withJSONObject: pass, options: [.sortedKeys])
        } catch {
            throw RegistryError(.invalid, field: "pass", "cannot be written back as JSON: \(error)")
        }
        guard data.count <= limits.passJSONBytes else {
            throw RegistryError(.invalid, field: "pass", "expected at most \(limits.passJSONBytes) bytes of JSON, found \(data.count)")
        }
        return data
    }

    static func checkImages(_ object: [String: Any], limits: PassLimits) throws(RegistryError) -> [String: Data] {
        guard object.count <= limits.imagesPerTemplate else {
            throw RegistryError(.invalid, field: "images", "expected at most \(limits.imagesPerTemplate) images, found \(object.count)")
        }
        guard object["icon.png"] != nil else { throw RegistryError(.invalid, field: "images.icon.png", "required in every pass") }
        var images: [String: Data] = [:]
        var total = 0
        for name in object.keys.sorted() {
            let field = "images.\(name.prefix(80))"
            guard isImageName(name) else {
                throw RegistryError(.invalid, field: field, "expected a PNG file name such as logo.png, logo@2x.png or fr.lproj/logo.png")
            }
            guard let text = object[name] as? String, let bytes = Data(base64Encoded: text) else {
                throw RegistryError(.invalid, field: field, "expected the PNG as a base64 string")
            }
            guard bytes.count <= limits.bytesPerImage else {
                throw RegistryError(.invalid, field: field, "expected at most \(limits.bytesPerImage) bytes, found \(bytes.count)")
            }
            guard bytes.starts(with: pngSignature) else {
                throw RegistryError(.invalid, field: field, "expected a PNG (it starts with 89 50 4E 47 0D 0A 1A 0A), found other bytes")
            }
            total += bytes.count
            guard total <= limits.templateBytes else {
                throw RegistryError(.invalid, field: field, "the images pass \(limits.templateBytes) bytes in all")
            }
            images[name] = bytes
        }
        return images
    }

    /// `name.png`, `name@2x.png`, optionally under one `xx.lproj/` or `xx-YY.lproj/` folder.
    static func isImageName(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), name.utf8.count <= 100 else { return false }
        if parts.count == 2 {
            let folder = parts[0]
            guard folder.hasSuffix(".lproj"), folder.count > 6,
                  folder.dropLast(6).allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") }) else { return false }
        }
        let file = parts[parts.count - 1]
        guard file.hasSuffix(".png"), file.count > 4 else { return false }
        return file.dropLast(4).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "@" || $0 == "_" || $0 == "-") }
    }
}
