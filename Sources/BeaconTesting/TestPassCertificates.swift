import Foundation

/// A pass signing chain made with openssl for tests: a root CA, a WWDR stand-in it issues (a CA
/// itself, as Apple's is), and a pass type certificate the WWDR stand-in issues, plus a second
/// key and certificate for "signed by someone else". Files are PEM, in `folder`.
public struct TestPassCertificates: Sendable {
    public let folder: URL
    public static let passTypeIdentifier = "pass.com.example.proxima"
    public static let teamIdentifier = "ABCDE12345"

    public func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    public enum Failure: Error, CustomStringConvertible {
        case openssl(String)
        public var description: String { switch self { case .openssl(let text): "openssl failed: \(text)" } }
    }

    /// openssl comes from scripts/install-test-deps; without it this throws (tests fail, not skip).
    public static func make() throws -> TestPassCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proxima-pass-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let chain = TestPassCertificates(folder: folder)
        try "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
            .write(to: folder.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
        try "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            .write(to: folder.appendingPathComponent("leaf.cnf"), atomically: true, encoding: .utf8)
        try chain.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
                           "-subj", "/CN=Proxima Test Root CA", "-addext", "basicConstraints=critical,CA:TRUE",
                           "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        try chain.issue("wwdr", subject: "/CN=Proxima Test WWDR Stand-in/OU=G4/O=Proxima Tests", by: "ca", extensions: "ca.cnf")
        let passSubject = "/UID=\(passTypeIdentifier)/CN=Pass Type ID: \(passTypeIdentifier)/OU=\(teamIdentifier)/O=Proxima Tests"
        try chain.issue("pass", subject: passSubject, by: "wwdr", extensions: "leaf.cnf")
        try chain.issue("other", subject: passSubject, by: "wwdr", extensions: "leaf.cnf")
        return chain
    }

    func issue(_ name: String, subject: String, by issuer: String, extensions: String) throws {
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject])
        try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key", "-CAcreateserial",
                     "-out", "\(name).pem", "-days", "2", "-extfile", extensions])
    }

    @discardableResult
    public func openssl(_ arguments: [String]) throws -> String {
        let (status, text) = try Self.tool("/usr/bin/openssl", arguments, in: folder)
        guard status == 0 else { throw Failure.openssl("openssl \(arguments.joined(separator: " ")): \(text)") }
        return text
    }

    /// Runs a program in `folder` to its end, with its output and errors together.
    public static func tool(_ path: String, _ arguments: [String], in folder: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// A pass template: a store card with no beacons yet, and a tiny icon.
    public func writeTemplate(named name: String = "template") throws -> URL {
        let template = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: template, withIntermediateDirectories: true)
        let pass: [String: Any] = [
            "formatVersion": 1, "passTypeIdentifier": Self.passTypeIdentifier, "serialNumber": "template",
            "teamIdentifier": Self.teamIdentifier, "organizationName": "High Street Store", "description": "Visitor pass",
            "backgroundColor": "rgb(20, 60, 120)", "foregroundColor": "rgb(255, 255, 255)",
            "storeCard": ["primaryFields": [["key": "visitor", "label": "Visitor", "value": "Guest"]]],
            "barcodes": [["format": "PKBarcodeFormatQR", "message": "visitor", "messageEncoding": "iso-8859-1"]],
        ]
        try JSONSerialization.data(withJSONObject: pass, options: [.prettyPrinted]).write(to: template.appendingPathComponent("pass.json"))
        // The PNG signature and an IHDR chunk's start: Wallet would render it, the format only needs the file.
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).write(to: template.appendingPathComponent("icon.png"))
        let localisation = template.appendingPathComponent("en.lproj")
        try FileManager.default.createDirectory(at: localisation, withIntermediateDirectories: true)
        try Data("\"visitor\" = \"Visitor\";\n".utf8).write(to: localisation.appendingPathComponent("pass.strings"))
        return template
    }
}
