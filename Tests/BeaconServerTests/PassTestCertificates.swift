import BeaconServer
import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// Certificates made in the test, in memory: a stand-in for Apple's WWDR intermediate, a pass
/// type certificate it issued (which both signs passes and is the APNs client certificate), and
/// a TLS server certificate for `localhost` for the local HTTP/2 endpoint. P-256 keys: swift-crypto
/// makes no RSA keys, and the pass library and TLS take either.
struct PassTestCertificates: Sendable {
    var wwdr: Certificate
    var wwdrPEM: String
    var passPEM: String
    var passKeyPEM: String
    var serverPEM: String
    var serverKeyPEM: String
    var serverCA: Certificate

    static let passTypeIdentifier = "pass.com.example.proxima"
    static let publicURL = "https://beacons.example.test"

    static func make(now: Date = Date()) throws -> PassTestCertificates {
        let wwdrKey = P256.Signing.PrivateKey()
        let wwdrName = try DistinguishedName { CommonName("Test WWDR Intermediate"); OrganizationName("Proxima tests") }
        let wwdr = try authority(name: wwdrName, key: wwdrKey, now: now)
        let passKey = P256.Signing.PrivateKey()
        let pass = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(passKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400,
            issuer: wwdrName,
            subject: try DistinguishedName { CommonName("Pass Type ID: \(passTypeIdentifier)"); OrganizationalUnitName("TEAMID1234") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) },
            issuerPrivateKey: .init(wwdrKey))
        let serverCAKey = P256.Signing.PrivateKey()
        let serverCAName = try DistinguishedName { CommonName("Test APNs CA") }
        let serverCA = try authority(name: serverCAName, key: serverCAKey, now: now)
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400,
            issuer: serverCAName, subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(serverCAKey))
        return PassTestCertificates(wwdr: wwdr, wwdrPEM: try wwdr.serializeAsPEM().pemString,
                                    passPEM: try pass.serializeAsPEM().pemString, passKeyPEM: passKey.pemRepresentation,
                                    serverPEM: try server.serializeAsPEM().pemString, serverKeyPEM: serverKey.pemRepresentation,
                                    serverCA: serverCA)
    }

    static func authority(name: DistinguishedName, key: P256.Signing.PrivateKey, now: Date) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(key))
    }

    func passConfiguration(apnsURL: String = APNsPassPusher.production) throws -> PassServiceConfiguration {
        var configuration = try PassServiceConfiguration(certificatePEM: passPEM, privateKeyPEM: passKeyPEM,
                                                         intermediatePEM: wwdrPEM, publicURL: Self.publicURL)
        configuration.apnsURL = apnsURL
        configuration.apnsTrustRoots = [try nioCertificate(serverCA)]
        return configuration
    }

    func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem)
    }
}
