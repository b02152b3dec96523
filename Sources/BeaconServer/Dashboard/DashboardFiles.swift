import Foundation

/// The dashboard's static files (HTML, CSS, JavaScript modules), read once from the module's
/// resources. Only these files are served, by their exact paths, so no request path reaches the
/// file system.
struct DashboardFiles: Sendable {
    struct File: Sendable {
        var contents: Data
        var contentType: String
    }

    /// URL path (`/dashboard/app.js`) to file.
    let files: [String: File]

    static let shared = DashboardFiles(directory: resourceDirectory)

    static var resourceDirectory: URL? {
        Bundle.module.url(forResource: "Dashboard", withExtension: nil, subdirectory: "Resources")
            ?? Bundle.module.url(forResource: "Dashboard", withExtension: nil)
    }

    init(directory: URL?) {
        guard let directory, let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            files = [:]
            return
        }
        let root = directory.resolvingSymlinksInPath().path
        var found: [String: File] = [:]
        for case let url as URL in enumerator {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                  let type = Self.contentTypes[url.pathExtension], let data = try? Data(contentsOf: url) else { continue }
            let relative = url.resolvingSymlinksInPath().path.dropFirst(root.count).drop { $0 == "/" }
            found["/dashboard/" + relative] = File(contents: data, contentType: type)
        }
        files = found
    }

    static let contentTypes = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml",
    ]

    /// No inline scripts or styles, nothing from other hosts, no framing, no plugins.
    static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
        "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")
}
