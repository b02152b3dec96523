@testable import BeaconServer
import BeaconTesting
import Foundation
import Testing

/// The dashboard's Wallet passes page in Chromium against a real `proxima serve --demo` that
/// signs passes with an openssl-made chain: an operator issues a pass for a visitor whose name
/// is hostile HTML and sees it listed as text; a read-only token sees the list and no controls.
@Suite("Dashboard: Wallet passes in a browser", .serialized)
struct DashboardPassesBrowserTests {
    static let hostileVisitor = "<img src=x onerror=alert(1)>"

    @Test func anOperatorIssuesAPassAndAReaderOnlySeesIt() async throws {
        let chain = try TestPassCertificates.make()
        let (server, base) = try await ProximaProcess.serve(database: "sqlite:\(chain.path("proxima.sqlite"))", instance: "passes-page", extra: [
            "--demo", "--pass-cert", chain.path("pass.pem"), "--pass-key", chain.path("pass.key"), "--pass-wwdr", chain.path("wwdr.pem"),
            "--public-url", "https://beacons.example.test",
        ])
        defer { server.stop() }
        let admin = APIClient(base: base, token: ProximaProcess.adminToken)
        let site = try #require(try await admin.get("/v1/sites", as: [Site].self).first)
        _ = try await admin.data("PUT", "/v1/sites/\(site.id)/pass-template", body: Data(try PassHarness.templateJSON().utf8))
        struct Issued: Decodable { var token: String }
        let operatorToken = try JSONDecoder().decode(Issued.self, from: try await admin.data("POST", "/v1/tokens",
            body: Data(#"{"name":"front desk","role":"operator"}"#.utf8))).token
        let readerToken = try JSONDecoder().decode(Issued.self, from: try await admin.data("POST", "/v1/tokens",
            body: Data(#"{"name":"lobby screen","role":"read-only"}"#.utf8))).token
        let shots = NSTemporaryDirectory() + "proxima-passes-screenshots-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: shots, withIntermediateDirectories: true)
        let origin = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString

        let browser = try await BrowserSession.start()
        do {
            try await browser.open(origin + "/")
            try await DashboardBrowserTests.signIn(browser, token: operatorToken)
            try await DashboardBrowserTests.show(browser, page: "passes")
            try await browser.waitFor("the issue form", "return document.getElementById('pass-visitor') !== null")
            try await browser.waitFor("the template note", "return /Pass template/.test(document.querySelector('.page-body').textContent)")
            try await browser.type(Self.hostileVisitor, into: "#pass-visitor")
            try await browser.click("#pass-issue")
            try await browser.waitFor("the issued pass in the table", "return document.querySelector('#pass-table tr[data-serial]') !== null")
            let cell = try await browser.run("const c = document.querySelector('#pass-table tr[data-serial] td.visitor'); return [c.textContent, c.querySelectorAll('img').length, document.querySelector('#pass-table tr[data-serial] td.beacons').textContent, document.querySelector('#pass-table tr[data-serial] td.version').textContent]")
            #expect(cell[0]?.string == Self.hostileVisitor, "the visitor's name is shown as text")
            #expect(cell[1]?.number == 0, "no element was made from the name")
            #expect(cell[3]?.string == "1")
            let carried = cell[2]?.string ?? ""
            #expect(!carried.isEmpty, "the pass carries the entrance beacons")
            #expect(try await browser.openDialogText() == nil, "no script ran")
            #expect(try await browser.run("return document.querySelectorAll('#pass-table button.download').length").number == 1)
            let listed = try await admin.get("/v1/sites/\(site.id)/passes", as: [IssuedPass].self)
            #expect(listed.map(\.visitor) == [Self.hostileVisitor])
            try await browser.screenshot(to: shots + "/passes-operator.png")

            // A read-only token: the list, without the form or downloads; its attempted write is refused by the API.
            try await browser.run("sessionStorage.clear(); location.hash = ''; location.reload(); return true")
            try await DashboardBrowserTests.signIn(browser, token: readerToken)
            try await DashboardBrowserTests.show(browser, page: "passes")
            try await browser.waitFor("the pass table for a reader", "return document.querySelector('#pass-table tr[data-serial]') !== null")
            let controls = try await browser.run("return [document.getElementById('pass-visitor') === null, document.querySelectorAll('button.download').length]")
            #expect(controls[0]?.isTruthy == true, "no issue form for a read-only token")
            #expect(controls[1]?.number == 0, "no download buttons for a read-only token")
            let refused = try await browser.runAsync("""
                const done = arguments[arguments.length - 1];
                fetch('/v1/sites/\(site.id)/passes', { method: 'POST', headers: { Authorization: 'Bearer ' + sessionStorage.getItem('proxima.token'), 'Content-Type': 'application/json' }, body: '{"visitor":"x"}' })
                  .then((r) => done(r.status), () => done(0));
                """)
            #expect(refused.number == 403, "the API refuses the reader's write")
            print("dashboard passes screenshots in \(shots)")
        } catch {
            Issue.record(error)
        }
        await browser.close()
    }
}
