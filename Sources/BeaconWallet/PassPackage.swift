import Foundation
import ZIPFoundation

/// A pass package (.pkpass): pass.json, images and localisations, manifest.json and signature,
/// zipped. Files are kept in memory, keyed by their path inside the package.
public struct PassPackage: Sendable {
    public var files: [String: Data]

    /// Bounds on what is read from outside: real passes are a few hundred kilobytes.
    public static let maximumFiles = 100
    public static let maximumBytes = 10 << 20
    public static let requiredFiles = ["pass.json", "icon.png"]

    public init(files: [String: Data]) {
        self.files = files
    }

    /// Validates a template's files, then adds manifest.json and the signature.
    public static func build(files template: [String: Data], signedBy identity: PassSigningIdentity,
                             at time: Date = Date()) throws(PassError) -> PassPackage {
        var files = template
        files[PassManifest.fileName] = nil
        files[PassManifest.signatureFileName] = nil
        try checkNames(files)
        for name in requiredFiles where files[name] == nil { throw PassError(name, "required in every pass") }
        try PassValidation.validate(passJSON: files["pass.json"]!)
        let manifest = PassManifest.make(files: files)
        files[PassManifest.fileName] = manifest
        files[PassManifest.signatureFileName] = try PassSignature.sign(manifest: manifest, with: identity, at: time)
        return PassPackage(files: files)
    }

    /// The .pkpass bytes: a zip of every file, deflated, in name order.
    public func zipped() throws(PassError) -> Data {
        do {
            let archive = try Archive(data: Data(), accessMode: .create)
            for name in files.keys.sorted() {
                let contents = files[name]!
                try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(contents.count), compressionMethod: .deflate) { position, size in
                    contents.subdata(in: Int(position)..<Int(position) + size)
                }
            }
            guard let data = archive.data else { throw PassError("package", "the archive was not written") }
            return data
        } catch let error as PassError {
            throw error
        } catch {
            throw PassError("package", "could not be zipped: \(error)")
        }
    }

    /// Reads a .pkpass, refusing more than ``maximumFiles`` entries, more than ``maximumBytes``
    /// unpacked, and paths that leave the package.
    public static func read(zip data: Data) throws(PassError) -> PassPackage {
        guard data.count <= maximumBytes else { throw PassError("package", "\(data.count) bytes; at most \(maximumBytes) are read") }
        let archive: Archive
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw PassError("package", "not a zip archive: \(error)")
        }
        var files: [String: Data] = [:]
        var total = 0
        for entry in archive {
            guard entry.type == .file else { continue }
            guard files.count < maximumFiles else { throw PassError("package", "more than \(maximumFiles) files") }
            // The declared size is checked first, and the bytes as they come, so a zip bomb
            // is stopped at the limit rather than unpacked.
            total += Int(clamping: entry.uncompressedSize)
            guard total <= maximumBytes else { throw PassError(entry.path, "unpacks past \(maximumBytes) bytes in all") }
            var contents = Data()
            do {
                _ = try archive.extract(entry) { chunk in
                    contents.append(chunk)
                    if contents.count > maximumBytes { throw PassError(entry.path, "unpacks past \(maximumBytes) bytes") }
                }
            } catch let error as PassError {
                throw error
            } catch {
                throw PassError(entry.path, "could not be unpacked: \(error)")
            }
            guard files[entry.path] == nil else { throw PassError(entry.path, "appears twice in the package") }
            files[entry.path] = contents
        }
        try checkNames(files)
        return PassPackage(files: files)
    }

    /// Reads a template folder: every regular file below it, by its path relative to the folder.
    public static func readTemplate(at folder: URL) throws(PassError) -> [String: Data] {
        let base = folder.standardizedFileURL.path
        guard let enumerator = FileManager.default.enumerator(atPath: base) else {
            throw PassError("--template", "\(base) is not a readable folder")
        }
        var files: [String: Data] = [:]
        while let relative = enumerator.nextObject() as? String {
            let path = base + "/" + relative
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            guard files.count < maximumFiles else { throw PassError("--template", "more than \(maximumFiles) files") }
            guard let contents = FileManager.default.contents(atPath: path) else { throw PassError(relative, "cannot be read") }
            files[relative] = contents
        }
        return files
    }

    static func checkNames(_ files: [String: Data]) throws(PassError) {
        for name in files.keys {
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            if name.isEmpty || name.hasPrefix("/") || name.contains("\\") || parts.contains("..") || parts.contains("") {
                throw PassError(name, "not a relative path inside the package")
            }
        }
    }
}
