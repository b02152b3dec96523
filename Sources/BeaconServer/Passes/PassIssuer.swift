import BeaconWallet
import Foundation
import NIOSSL

/// How the server signs passes and where Wallet finds its web service (`proxima serve
/// --pass-cert/--pass-key/--pass-wwdr --public-url`).
public struct PassServiceConfiguration: Sendable {
    public var signing: PassSigningIdentity
    /// The PEM texts the identity was loaded from: the APNs client presents the same pass type
    /// certificate as its TLS client certificate.
    public var certificatePEM: String
    public var privateKeyPEM: String
    /// The server's public base URL (https); passes carry it + "/wallet" as `webServiceURL`.
    public var publicURL: URL
    public var limits = PassLimits()
    /// Where pass-update pushes go: Apple's production APNs unless changed (its sandbox, or a
    /// local endpoint in tests).
    public var apnsURL = APNsPassPusher.production
    /// CAs for the APNs endpoint's certificate; nil trusts the system's, as Apple's needs.
    public var apnsTrustRoots: [NIOSSLCertificate]?

    /// Loads and checks the identity; refusals name the option (`--pass-cert`, `--public-url`).
    public init(certificatePEM: String, privateKeyPEM: String, intermediatePEM: String, publicURL: String, now: Date = Date()) throws(PassError) {
        do {
            signing = try PassSigningIdentity(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM, intermediatePEM: intermediatePEM, now: now)
        } catch {
            throw PassError(error.field.replacingOccurrences(of: "--", with: "--pass-"), error.reason)
        }
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
        guard let url = URL(string: publicURL), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
              url.query == nil, url.fragment == nil else {
            throw PassError("--public-url", "expected the https URL Wallet reaches this server at, such as https://beacons.example.com, found '\(publicURL.prefix(100))'")
        }
        self.publicURL = url
    }

    /// Where Wallet calls the pass web service (it appends `/v1/…`).
    public var webServiceURL: String {
        var text = publicURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + ProximaServer.walletPrefix
    }
}

/// Writes and signs the .pkpass of one version of a pass: the site's template with the pass's
/// serial, beacons, web service URL and authentication token.
enum PassIssuer {
    static func package(template: PassTemplate, pass stored: StoredPass, configuration: PassServiceConfiguration,
                        signingTime: Date = Date()) throws(PassError) -> Data {
        guard var passObject = (try? JSONSerialization.jsonObject(with: template.passJSON)) as? [String: Any] else {
            throw PassError("pass.json", "the stored template is not a JSON object")
        }
        let pass = stored.pass
        passObject["serialNumber"] = pass.serial
        passObject["webServiceURL"] = configuration.webServiceURL
        passObject["authenticationToken"] = stored.authenticationToken
        passObject["beacons"] = pass.beacons.map { beacon -> [String: Any] in
            ["proximityUUID": beacon.uuid.uuidString, "major": Int(beacon.major), "minor": Int(beacon.minor), "relevantText": beacon.relevantText]
        }
        let passJSON: Data
        do {
            passJSON = try JSONSerialization.data(withJSONObject: passObject, options: [.sortedKeys])
        } catch {
            throw PassError("pass.json", "cannot be written: \(error)")
        }
        var files = template.images
        files["pass.json"] = passJSON
        // Signed now rather than at the version's time: a certificate renewed since that version
        // was made would otherwise sign at a time before its own validity.
        let package = try PassPackage.build(files: files, signedBy: configuration.signing, at: signingTime)
        return try package.zipped()
    }

    /// A random authentication token: 32 characters from a 64-letter alphabet (192 bits), above
    /// Wallet's minimum of 16.
    static func newAuthenticationToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// A random serial: unguessable, so a serial seen on one pass says nothing about another's.
    static func newSerial() -> String {
        UUID().uuidString.lowercased()
    }
}
