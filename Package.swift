// swift-tools-version:6.0
import PackageDescription

/// The simulation and positioning modules compiled with optimisation in the test build
/// (`scripts/test` sets PROXIMA_OPTIMIZE_SIMULATION=1): unoptimised, the location evaluation
/// runs 15 times slower (home.json's 120 s positions section: 35 s against 2.3 s), and CI's
/// second pass spent 18 of its 60 minutes there. Opt-in, because a package with unsafe flags
/// cannot be another package's dependency.
let simulationSettings: [SwiftSetting] = Context.environment["PROXIMA_OPTIMIZE_SIMULATION"] == "1"
    ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []

let package = Package(
    name: "Proxima",
    products: [
        .library(name: "BeaconKit", targets: ["BeaconKit"]),
        .library(name: "BeaconHCI", targets: ["BeaconHCI"]),
        .library(name: "BeaconSimulator", targets: ["BeaconSimulator"]),
        .library(name: "BeaconGateway", targets: ["BeaconGateway"]),
        .library(name: "BeaconLocate", targets: ["BeaconLocate"]),
        .library(name: "BeaconFleet", targets: ["BeaconFleet"]),
        .library(name: "BeaconWallet", targets: ["BeaconWallet"]),
        .library(name: "BeaconRotation", targets: ["BeaconRotation"]),
        .library(name: "BeaconMQTT", targets: ["BeaconMQTT"]),
        .library(name: "BeaconSecurity", targets: ["BeaconSecurity"]),
        .executable(name: "proxima", targets: ["proxima"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Documentation only: `swift package generate-documentation` (scripts/build-docs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit", from: "2.17.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        .target(
            name: "BeaconKit",
            dependencies: [.product(name: "DequeModule", package: "swift-collections"), "CPrefetch"],
            swiftSettings: simulationSettings
        ),
        .target(name: "CPrefetch"),
        .target(name: "CHCIShim"),
        .target(name: "BeaconHCI", dependencies: ["BeaconKit", "CHCIShim"]),
        .target(
            name: "BeaconSimulator",
            dependencies: ["BeaconKit", "BeaconLocate", "BeaconFleet", "BeaconSecurity", "BeaconRotation", .product(name: "DequeModule", package: "swift-collections"),
                           .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: simulationSettings
        ),
        // Spoof and replay checks (issue 15): a pure, clock-driven detector of the sighting stream.
        .target(name: "BeaconSecurity", dependencies: ["BeaconKit", "BeaconRotation"]),
        .target(name: "BeaconLocate", dependencies: ["BeaconKit", .product(name: "DequeModule", package: "swift-collections")], swiftSettings: simulationSettings),
        .target(name: "BeaconFleet", dependencies: ["BeaconKit"]),
        // Rotating identities (issue 15): pure derivation and window rule, shared by the
        // advertiser and the server.
        .target(name: "BeaconRotation", dependencies: ["BeaconKit", .product(name: "Crypto", package: "swift-crypto")]),
        // Wallet passes: no server or radio code, so a pass tool can embed it alone.
        .target(
            name: "BeaconWallet",
            dependencies: [
                "BeaconKit",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        .target(name: "BeaconTesting", dependencies: ["BeaconKit", "BeaconHCI", "CHCIShim"]),
        // MQTT output: the client speaks only NIO, and the topic layouts read BeaconKit's events.
        .target(
            name: "BeaconMQTT",
            dependencies: [
                "BeaconKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The edge gateway's client: no Hummingbird, SQLKit or database drivers, so a gateway
        // binary stays small.
        .target(
            name: "BeaconGateway",
            dependencies: [
                "BeaconKit",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "BeaconServer",
            dependencies: [
                "BeaconKit", "BeaconGateway", "BeaconLocate", "BeaconFleet", "BeaconWallet", "BeaconRotation", "BeaconMQTT", "BeaconSecurity",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources")]
        ),
        .executableTarget(
            name: "proxima",
            dependencies: [
                "BeaconKit", "BeaconHCI", "BeaconSimulator", "BeaconServer", "BeaconGateway",
                "BeaconLocate", "BeaconFleet", "BeaconWallet", "BeaconRotation", "BeaconMQTT", "BeaconSecurity",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `serve --demo`'s simulated gateway runs as one of the server's services.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .target(name: "CReferenceDecoder"),
        .executableTarget(
            name: "proxima-bench",
            dependencies: [
                "BeaconKit", "BeaconHCI", "BeaconSimulator", "CReferenceDecoder", "BeaconServer", "BeaconGateway", "BeaconTesting",
                "BeaconLocate", "BeaconFleet",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "BeaconKitTests",
            dependencies: ["BeaconKit"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "BeaconHCITests", dependencies: ["BeaconHCI", "BeaconTesting"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BeaconSimulatorTests", dependencies: ["BeaconSimulator", "BeaconKit", "BeaconHCI", "BeaconLocate", "BeaconFleet", "BeaconSecurity", "BeaconRotation"]),
        .testTarget(name: "BeaconSecurityTests", dependencies: ["BeaconSecurity", "BeaconKit", "BeaconRotation"]),
        .testTarget(
            name: "BeaconServerTests",
            dependencies: [
                "BeaconServer", "BeaconKit", "BeaconGateway", "BeaconTesting", "BeaconSimulator", "BeaconLocate", "BeaconFleet",
                "BeaconWallet", "BeaconRotation", "BeaconMQTT",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The local HTTP/2 endpoint the APNs client is tested against, and its test-made certificates.
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                // A real WebSocket client for the event socket's live-connection tests.
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BeaconGatewayTests",
            dependencies: [
                "BeaconGateway", "BeaconKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "BeaconLocateTests", dependencies: ["BeaconLocate", "BeaconKit"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BeaconFleetTests", dependencies: ["BeaconFleet", "BeaconKit"]),
        .testTarget(name: "BeaconRotationTests", dependencies: ["BeaconRotation", "BeaconKit"]),
        .testTarget(name: "BeaconWalletTests", dependencies: ["BeaconWallet", "BeaconKit", "BeaconTesting"]),
        .testTarget(name: "BeaconMQTTTests", dependencies: ["BeaconMQTT", "BeaconKit", "BeaconTesting",
                                                           .product(name: "NIOCore", package: "swift-nio"),
                                                           .product(name: "NIOPosix", package: "swift-nio")]),
        .testTarget(name: "ProximaCLITests", dependencies: ["BeaconKit", "BeaconTesting", "BeaconWallet"]),
    ],
    swiftLanguageModes: [.v6]
)
