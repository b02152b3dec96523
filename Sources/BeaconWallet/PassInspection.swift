import Foundation
import X509

/// Everything `proxima pass inspect` checks, in the order Wallet would trip on it: the files
/// a pass needs, pass.json's rules, every manifest hash, and the signature and its chain.
public enum PassInspection {
    public struct Report: Sendable {
        public var passTypeIdentifier: String
        public var serialNumber: String
        public var beacons: [String]
        public var files: [String]
        public var signer: String
        public var signingTime: Date?
    }

    public static func inspect(_ package: PassPackage, trustRoots: [Certificate]? = nil, at time: Date = Date()) async throws(PassError) -> Report {
        for name in PassPackage.requiredFiles + [PassManifest.fileName, PassManifest.signatureFileName] where package.files[name] == nil {
            throw PassError(name, "missing from the package")
        }
        let pass = try PassValidation.validate(passJSON: package.files["pass.json"]!)
        let manifest = package.files[PassManifest.fileName]!
        try PassManifest.check(manifest: manifest, files: package.files)
        let verified = try await PassSignature.verify(manifest: manifest, signature: package.files[PassManifest.signatureFileName]!,
                                                      trustRoots: trustRoots, at: time)
        let beacons = (pass["beacons"] as? [[String: Any]] ?? []).map { beacon in
            [beacon["proximityUUID"] as? String, (beacon["major"] as? NSNumber)?.stringValue, (beacon["minor"] as? NSNumber)?.stringValue]
                .compactMap { $0 }.joined(separator: ":")
        }
        return Report(passTypeIdentifier: pass["passTypeIdentifier"] as? String ?? "", serialNumber: pass["serialNumber"] as? String ?? "",
                      beacons: beacons, files: package.files.keys.sorted(), signer: "\(verified.signer.subject)",
                      signingTime: verified.signingTime)
    }
}
