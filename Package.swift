// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Proxima",
    products: [
        .library(name: "BeaconKit", targets: ["BeaconKit"]),
        .library(name: "BeaconHCI", targets: ["BeaconHCI"]),
        .library(name: "BeaconSimulator", targets: ["BeaconSimulator"]),
        .executable(name: "proxima", targets: ["proxima"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        .target(
            name: "BeaconKit",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(name: "CHCIShim"),
        .target(name: "BeaconHCI", dependencies: ["BeaconKit", "CHCIShim"]),
        .target(name: "BeaconSimulator", dependencies: ["BeaconKit"]),
        .target(name: "BeaconTesting", dependencies: ["BeaconKit", "BeaconHCI", "CHCIShim"]),
        .executableTarget(
            name: "proxima",
            dependencies: [
                "BeaconKit", "BeaconHCI", "BeaconSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "CReferenceDecoder"),
        .executableTarget(
            name: "proxima-bench",
            dependencies: ["BeaconKit", "BeaconHCI", "BeaconSimulator", "CReferenceDecoder"]
        ),
        .testTarget(
            name: "BeaconKitTests",
            dependencies: ["BeaconKit"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "BeaconHCITests", dependencies: ["BeaconHCI", "BeaconTesting"], resources: [.copy("Fixtures")]),
        .testTarget(name: "BeaconSimulatorTests", dependencies: ["BeaconSimulator", "BeaconKit", "BeaconHCI"]),
        .testTarget(name: "ProximaCLITests", dependencies: ["BeaconKit", "BeaconTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
