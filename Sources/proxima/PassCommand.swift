import ArgumentParser
import BeaconWallet
import Foundation
import X509

struct PassCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pass",
        abstract: "Wallet passes that carry beacons: create and sign a .pkpass, inspect one, validate pass.json.",
        subcommands: [PassCreate.self, PassInspect.self, PassValidate.self])
}

struct PassCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Sign a .pkpass from a template folder, with the beacons of a file or of a site on a server.")

    @Option(help: "Template folder: pass.json, icon.png and any other images and localisations.")
    var template: String

    @Option(help: "Beacons to carry: a JSON array of {proximityUUID, major, minor, relevantText} or CSV lines uuid,major,minor[,relevant text] (at most 10).")
    var beacons: String?

    @Option(help: "Carry the deployed beacons of this site, read from --server with --token (at most 10).")
    var site: Int?

    @Option(help: "The server's URL, with --site.")
    var server: String?

    @Option(help: "A read token for --server, with --site.")
    var token: String?

    @Option(help: "The relevant text of beacons that have none (shown on the lock screen near them).")
    var relevantText: String?

    @Option(help: "The pass's serial number (default: the template's).")
    var serial: String?

    @Option(help: "Pass type certificate: PEM, or a PKCS#12 (.p12) file holding it with its key.")
    var cert: String

    @Option(help: "Its private key, PEM, plain or encrypted (not needed with a .p12).")
    var key: String?

    @Option(help: "A file whose first line is the password of the .p12 or of the encrypted key.")
    var passwordFile: String?

    @Option(help: "Apple's WWDR intermediate certificate, PEM.")
    var wwdr: String

    @Option(name: .shortAndLong, help: "The .pkpass file to write.")
    var output: String

    func validate() throws {
        switch (beacons, site) {
        case (nil, nil): throw ValidationError("--beacons or --site: one of them says which beacons the pass carries")
        case (.some, .some): throw ValidationError("--beacons and --site: give one of them")
        case (nil, .some):
            guard server != nil, token != nil else { throw ValidationError("--site needs --server and --token") }
        case (.some, nil): break
        }
    }

    func run() async throws {
        do {
            var files = try PassPackage.readTemplate(at: URL(fileURLWithPath: template))
            guard let templateJSON = files["pass.json"] else { throw PassError("--template", "\(template) has no pass.json") }
            var pass = try PassFileInput.object(templateJSON, field: "pass.json")
            let carried = try await carriedBeacons()
            pass["beacons"] = carried.map(\.passJSON)
            if let serial { pass["serialNumber"] = serial }
            files["pass.json"] = try JSONSerialization.data(withJSONObject: pass, options: [.prettyPrinted, .sortedKeys])
            let identity = try signingIdentity()
            let package = try PassPackage.build(files: files, signedBy: identity)
            let bytes = try package.zipped()
            guard FileManager.default.createFile(atPath: output, contents: bytes) else {
                throw PassError("--output", "\(output) could not be written")
            }
            try StandardOutput.line("\(output): \(bytes.count) bytes, serial \(pass["serialNumber"] as? String ?? "?"), \(carried.count) beacon\(carried.count == 1 ? "" : "s"), signed by \(identity.certificate.subject)")
        } catch let error as PassError {
            printError("\(error)")
            throw ExitCode.failure
        }
    }

    func signingIdentity() throws(PassError) -> PassSigningIdentity {
        let password = try passwordFile.map { path throws(PassError) in
            String(try PassFileInput.text(path, field: "--password-file").split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        let certificate = try PassFileInput.data(cert, field: "--cert")
        let intermediate = try PassFileInput.text(wwdr, field: "--wwdr")
        if PassSigningIdentity.isPKCS12(certificate) {
            return try PassSigningIdentity(pkcs12: certificate, password: password ?? "", intermediatePEM: intermediate)
        }
        guard let key else { throw PassError("--key", "required with a PEM certificate") }
        return try PassSigningIdentity(certificatePEM: String(decoding: certificate, as: UTF8.self),
                                       privateKeyPEM: try PassFileInput.text(key, field: "--key"),
                                       intermediatePEM: intermediate, password: password)
    }

    func carriedBeacons() async throws -> [PassBeacon] {
        var list: [PassBeacon]
        if let beacons {
            list = try PassBeacon.read(file: beacons)
        } else {
            list = try await PassBeacon.deployed(site: site!, server: server!, token: token!)
        }
        if list.count > PassValidation.maximumBeacons {
            throw PassError("beacons[\(PassValidation.maximumBeacons)]", "a pass carries at most \(PassValidation.maximumBeacons) beacons; \(list.count) given")
        }
        if let relevantText {
            for index in list.indices where list[index].relevantText == nil { list[index].relevantText = relevantText }
        }
        return list
    }
}

struct PassInspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "List a .pkpass and check it: required files, pass.json, every manifest hash, the signature and its chain; exit 0 only when all hold.")

    @Argument(help: "The .pkpass file.")
    var file: String

    @Option(help: "A root certificate (PEM) the WWDR certificate must chain to; without it the chain ends at the carried WWDR certificate.")
    var ca: String?

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    func run() async throws {
        do {
            let package = try PassPackage.read(zip: try PassFileInput.data(file, field: "FILE"))
            var roots: [Certificate]?
            if let ca { roots = try PassFileInput.certificates(ca, field: "--ca") }
            let report = try await PassInspection.inspect(package, trustRoots: roots)
            if json {
                let object: [String: Any] = [
                    "passTypeIdentifier": report.passTypeIdentifier, "serialNumber": report.serialNumber,
                    "beacons": report.beacons, "files": report.files, "signer": report.signer,
                    "signingTime": report.signingTime.map { ISO8601DateFormatter().string(from: $0) } ?? NSNull(), "valid": true,
                ]
                try StandardOutput.line(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            try StandardOutput.line("\(file): \(report.passTypeIdentifier) serial \(report.serialNumber)")
            for name in report.files { try StandardOutput.line("  file \(name)") }
            for beacon in report.beacons { try StandardOutput.line("  beacon \(beacon)") }
            try StandardOutput.line("  signed by \(report.signer)\(report.signingTime.map { " at \(ISO8601DateFormatter().string(from: $0))" } ?? "")")
            try StandardOutput.line("valid: every manifest hash matches and the signature chains to \(ca ?? "the carried WWDR certificate")")
        } catch let error as PassError {
            printError("\(file): invalid: \(error)")
            throw ExitCode.failure
        }
    }
}

struct PassValidate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "Check pass.json alone against Wallet's rules, naming the first field that breaks one.")

    @Argument(help: "A pass.json file.")
    var file: String

    func run() throws {
        do {
            let pass = try PassValidation.validate(passJSON: try PassFileInput.data(file, field: "FILE"))
            let beacons = (pass["beacons"] as? [Any])?.count ?? 0
            try StandardOutput.line("\(file): valid, serial \(pass["serialNumber"] as? String ?? "?"), \(beacons) beacon\(beacons == 1 ? "" : "s")")
        } catch let error as PassError {
            printError("\(file): invalid: \(error)")
            throw ExitCode.failure
        }
    }
}
