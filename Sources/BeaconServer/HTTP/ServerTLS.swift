import Foundation
import HummingbirdCore
import HummingbirdTLS
import NIOSSL

/// HTTPS for `proxima serve --tls-cert --tls-key`: the certificate chain and key from PEM files,
/// read and checked before the server starts, with errors that name the option.
public enum ServerTLS {
    public static func configuration(certificatePath: String, keyPath: String) throws(ServerInputError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificatePath) } catch {
            throw ServerInputError(field: "tls-cert", reason: "cannot read a PEM certificate chain from \(certificatePath): \(error)")
        }
        guard !chain.isEmpty else {
            throw ServerInputError(field: "tls-cert", reason: "\(certificatePath) holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(file: keyPath, format: .pem) } catch {
            throw ServerInputError(field: "tls-key", reason: "cannot read a PEM private key from \(keyPath): \(error)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // A key that does not belong to the certificate fails here, not at the first client.
        do { _ = try NIOSSLContext(configuration: configuration) } catch {
            throw ServerInputError(field: "tls-key", reason: "the key does not match the certificate in --tls-cert, or is not usable: \(error)")
        }
        return configuration
    }

    /// The channel a connection gets: the guarded HTTP channel, inside TLS when configured.
    static func wrap(_ channel: some ServerChildChannel, tls: TLSConfiguration?) throws -> any ServerChildChannel {
        guard let tls else { return channel }
        return try TLSChannel(channel, tlsConfiguration: tls)
    }
}
