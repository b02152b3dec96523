import AsyncHTTPClient
import BeaconTesting
import Foundation
import Glibc
import NIOCore
import NIOFoundationCompat
import Testing

/// JSON as WebDriver speaks it, Sendable so answers can cross tasks.
enum JSONValue: Sendable, Codable, Equatable, CustomStringConvertible {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    subscript(key: String) -> JSONValue? { if case .object(let object) = self { object[key] } else { nil } }
    subscript(index: Int) -> JSONValue? { if case .array(let array) = self, array.indices.contains(index) { array[index] } else { nil } }
    var string: String? { if case .string(let value) = self { value } else { nil } }
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// JavaScript's truthiness, for waiting on a script's answer.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let value): value
        case .number(let value): value != 0
        case .string(let value): !value.isEmpty
        case .array, .object: true
        }
    }

    var description: String {
        guard let data = try? JSONEncoder().encode(self) else { return "?" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Headless Chromium driven through chromedriver's W3C WebDriver endpoint (plain HTTP and JSON).
/// One browser per suite: starting it costs about a second.
final class BrowserSession: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"

    /// On CI the browser must start, so a missing one fails the tests rather than skipping them.
    static var shouldRun: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true"
            || (FileManager.default.isExecutableFile(atPath: chromium) && FileManager.default.isExecutableFile(atPath: chromedriver))
    }

    let driver: Process
    let driverURL: String
    let sessionID: String
    let profile: String

    static func start() async throws -> BrowserSession {
        guard FileManager.default.isExecutableFile(atPath: chromium), FileManager.default.isExecutableFile(atPath: chromedriver) else {
            throw Failure(description: "chromium and chromedriver are not installed (scripts/install-test-deps installs them)")
        }
        let port = try freePort()
        let driver = Process()
        driver.executableURL = URL(fileURLWithPath: chromedriver)
        driver.arguments = ["--port=\(port)", "--log-level=OFF"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try ProcessLaunch.run(driver)
        let driverURL = "http://127.0.0.1:\(port)"
        var ready = false
        for _ in 0..<100 {
            if let status = try? await raw("GET", driverURL + "/status", body: nil), status["value"]?["ready"]?.bool == true {
                ready = true
                break
            }
            // Waits on the chromedriver process answering on its port.
            try await Task.sleep(for: .milliseconds(100))
        }
        guard ready else {
            kill(driver.processIdentifier, SIGKILL)
            throw Failure(description: "chromedriver did not answer on port \(port)")
        }
        let profile = NSTemporaryDirectory() + "proxima-chromium-\(UUID().uuidString)"
        let arguments: [JSONValue] = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                                      "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
                                      // A page in a window that is not in front keeps its timers (the fleet page waits in one).
                                      "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
                                      "--disable-component-update", "--user-data-dir=\(profile)"].map { .string($0) }
        let capabilities: JSONValue = .object(["capabilities": .object(["alwaysMatch": .object([
            "browserName": "chrome", "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": .object(["binary": .string(chromium), "args": .array(arguments)]),
        ])])])
        let answer: JSONValue
        do {
            answer = try await raw("POST", driverURL + "/session", body: capabilities)
        } catch {
            kill(driver.processIdentifier, SIGKILL)
            throw error
        }
        guard let sessionID = answer["value"]?["sessionId"]?.string else {
            kill(driver.processIdentifier, SIGKILL)
            throw Failure(description: "chromium did not start: \(answer)")
        }
        return BrowserSession(driver: driver, driverURL: driverURL, sessionID: sessionID, profile: profile)
    }

    private init(driver: Process, driverURL: String, sessionID: String, profile: String) {
        self.driver = driver
        self.driverURL = driverURL
        self.sessionID = sessionID
        self.profile = profile
    }

    func close() async {
        _ = try? await Self.raw("DELETE", "\(driverURL)/session/\(sessionID)", body: nil)
        // chromedriver leaves on its /shutdown command; it does not act on SIGTERM.
        _ = try? await Self.raw("GET", "\(driverURL)/shutdown", body: nil)
        // Waits on the chromedriver process exiting.
        for _ in 0..<50 where driver.isRunning { try? await Task.sleep(for: .milliseconds(100)) }
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        driver.waitUntilExit()
        try? FileManager.default.removeItem(atPath: profile)
    }

    static func raw(_ method: String, _ url: String, body: JSONValue?) async throws -> JSONValue {
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let data = Data(buffer: try await response.body.collect(upTo: 64 * 1024 * 1024))
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// A session command; WebDriver errors (`value.error`) are thrown.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        let answer = try await Self.raw(method, "\(driverURL)/session/\(sessionID)\(path)", body: body ?? (method == "POST" ? .object([:]) : nil))
        if let error = answer["value"]?["error"]?.string {
            throw Failure(description: "\(method) \(path): \(error): \(answer["value"]?["message"]?.string?.prefix(400) ?? "")")
        }
        return answer["value"] ?? .null
    }

    /// The handle of the window commands go to.
    func currentWindow() async throws -> String {
        guard let handle = try await command("GET", "/window").string else { throw Failure(description: "no current window") }
        return handle
    }

    /// Opens a new window (not a tab, so neither hides the other) and makes it current.
    func openWindow() async throws -> String {
        guard let handle = try await command("POST", "/window/new", .object(["type": "window"]))["handle"]?.string else {
            throw Failure(description: "no new window")
        }
        try await switchTo(window: handle)
        return handle
    }

    func switchTo(window handle: String) async throws {
        try await command("POST", "/window", .object(["handle": .string(handle)]))
    }

    /// Closes the current window; switch to another before the next command.
    func closeWindow() async throws {
        try await command("DELETE", "/window")
    }

    func open(_ url: String) async throws {
        try await command("POST", "/url", .object(["url": .string(url)]))
    }

    /// Runs a script in the page (`return …;`), with `arguments` from `args`.
    @discardableResult
    func run(_ script: String, _ args: [JSONValue] = []) async throws -> JSONValue {
        try await command("POST", "/execute/sync", .object(["script": .string(script), "args": .array(args)]))
    }

    /// Runs an asynchronous script: it calls `arguments[arguments.length - 1](result)` when done.
    func runAsync(_ script: String) async throws -> JSONValue {
        try await command("POST", "/execute/async", .object(["script": .string(script), "args": .array([])]))
    }

    /// Polls `script` until it answers something truthy; the answer, or a failure naming `what`.
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(10), _ script: String) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        var last: JSONValue = .null
        while ContinuousClock.now < deadline {
            last = try await run(script)
            if last.isTruthy { return last }
            // Waits on Chromium's page, driven by the server it talks to.
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "timed out after \(timeout) waiting for \(what); last answer \(last)")
    }

    func element(_ css: String) async throws -> String {
        let found = try await command("POST", "/element", .object(["using": "css selector", "value": .string(css)]))
        guard case .object(let object) = found, let id = object.values.first?.string else { throw Failure(description: "no element \(css)") }
        return id
    }

    func type(_ text: String, into css: String) async throws {
        try await command("POST", "/element/\(try await element(css))/value", .object(["text": .string(text)]))
    }

    /// Pages that redraw on a timer (the fleet table every few seconds) can replace the element
    /// between finding and clicking it; WebDriver then answers "stale element reference", and
    /// the right response is to find it again, as a person's second click would.
    func click(_ css: String) async throws {
        var attempt = 0
        while true {
            do {
                try await command("POST", "/element/\(try await element(css))/click")
                return
            } catch let failure as Failure where failure.description.contains("stale element reference") && attempt < 5 {
                attempt += 1
            }
        }
    }

    /// The text of an open alert, confirm or prompt dialog, or nil when none is open.
    func openDialogText() async throws -> String? {
        let answer = try await Self.raw("GET", "\(driverURL)/session/\(sessionID)/alert/text", body: nil)
        if answer["value"]?["error"]?.string == "no such alert" { return nil }
        return answer["value"]?.string ?? "\(answer)"
    }

    /// Lays the page out at a width and height (phone sizes via device-metrics emulation, since a
    /// window cannot be made that narrow everywhere).
    func viewport(width: Int, height: Int, mobile: Bool) async throws {
        try await command("POST", "/goog/cdp/execute", .object(["cmd": "Emulation.setDeviceMetricsOverride", "params": .object([
            "width": .number(Double(width)), "height": .number(Double(height)), "deviceScaleFactor": 1, "mobile": .bool(mobile),
        ])]))
    }

    func screenshot(to path: String) async throws {
        guard let base64 = try await command("GET", "/screenshot").string, let data = Data(base64Encoded: base64) else {
            throw Failure(description: "the screenshot was not base64 PNG")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// A loopback port nothing listens on now.
    static func freePort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw Failure(description: "socket() failed") }
        defer { _ = Glibc.close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
}
