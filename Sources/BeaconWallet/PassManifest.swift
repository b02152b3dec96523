import Crypto
import Foundation

/// manifest.json: the SHA-1 of every file of the package but the manifest and its signature,
/// as lowercase hex by file name (Apple's pass package format; Wallet still uses SHA-1 here).
public enum PassManifest {
    public static let fileName = "manifest.json"
    public static let signatureFileName = "signature"

    public static func make(files: [String: Data]) -> Data {
        var manifest: [String: String] = [:]
        for (name, contents) in files where name != fileName && name != signatureFileName {
            manifest[name] = sha1Hex(contents)
        }
        // Sorted keys and no escaped slashes: the same files give the same bytes, and so the
        // same signature input, on every run.
        return try! JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
    }

    /// Checks a package's files against its manifest; throws naming the first file that is
    /// missing from either side or whose hash differs.
    public static func check(manifest data: Data, files: [String: Data]) throws(PassError) {
        guard let parsed = try? JSONSerialization.jsonObject(with: data), let object = parsed as? [String: Any] else {
            throw PassError(fileName, "not a JSON object of file names and hashes")
        }
        for name in object.keys.sorted() {
            guard let expected = object[name] as? String else { throw PassError("\(fileName).\(name)", "the hash must be a string") }
            guard let contents = files[name] else { throw PassError(name, "listed in \(fileName) but missing from the package") }
            let actual = sha1Hex(contents)
            guard actual == expected.lowercased() else {
                throw PassError(name, "SHA-1 \(actual) does not match \(expected) in \(fileName): the file changed after signing")
            }
        }
        for name in files.keys.sorted() where name != fileName && name != signatureFileName && object[name] == nil {
            throw PassError(name, "in the package but not in \(fileName), so not covered by the signature")
        }
    }

    static func sha1Hex(_ data: Data) -> String {
        Insecure.SHA1.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
