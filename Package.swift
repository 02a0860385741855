// swift-tools-version: 6.0
//
// FleetConsumer: follow Google Fleet Engine trips from Linux backends over our own gRPC
// client (HTTP/2 by nghttp2, protobuf by protobuf-c). Layers and their order: shared
// DESIGN.md in the project; the layout of this file follows it bottom-up.

import PackageDescription

let package = Package(
  name: "FleetConsumer",
  products: [
    .library(name: "ProtoRuntime", targets: ["ProtoRuntime"]),
    .library(name: "FleetProtos", targets: ["FleetProtos"]),
    .library(name: "GRPCTestingProtos", targets: ["GRPCTestingProtos"]),
    .library(name: "GRPCServiceProtos", targets: ["GRPCServiceProtos"]),
    .library(name: "GRPCWire", targets: ["GRPCWire"]),
    .library(name: "GRPCObservability", targets: ["GRPCObservability"]),
    .library(name: "FleetConsumer", targets: ["FleetConsumer"]),
    .library(name: "FleetSimulator", targets: ["FleetSimulator"]),
    .library(name: "FleetShare", targets: ["FleetShare"]),
    .library(name: "GRPCHealth", targets: ["GRPCHealth"]),
    .library(name: "GRPCReflection", targets: ["GRPCReflection"]),
    .library(name: "JourneySharing", targets: ["JourneySharing"]),
    // Not an API: fleet-codec-bench's measurements, for Benchmarks/'s codec-bench.
    .library(name: "FleetCodecBenchmark", targets: ["FleetCodecBenchmark"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    // fleet-load's latency percentiles (HdrHistogram, as ghz and wrk2 use).
    .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    // Operability (issue 16): logs, metrics, traces and lifecycle through the server
    // ecosystem's APIs, so a service's own backends see our calls.
    .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    // fleet-sim --metrics-port: Prometheus text exposition over HTTP.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    // Docs/OwnServices.md's adapter, tested: swift-protobuf messages over GRPCWire.
    .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
  ],
  targets: [
    // MARK: C libraries from Debian's -dev packages

    .systemLibrary(
      name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
    .systemLibrary(
      name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
    .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
    .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

    // MARK: Messages

    // Each message module is Swift value types (Generated/) over a C target of protobuf-c code
    // (`…C`), both generated from Protos/ by CodeGen/generate, whose MODULES table says which
    // proto package goes where; never edited by hand.

    // The protobuf runtime (ProtoMessage, its protobuf-c bridge and arena, file descriptors),
    // the well-known types and google.rpc's Status and error details: all GRPCWire needs.
    .target(
      name: "ProtoRuntimeC",
      dependencies: ["CProtobufC"],
      linkerSettings: [.linkedLibrary("protobuf-c")]
    ),
    .target(name: "ProtoRuntime", dependencies: ["ProtoRuntimeC", "CProtobufC"]),
    // The Fleet Engine trip API (maps.fleetengine.v1, google.type) and our trip feed
    // (fleetconsumer.v1); re-exports ProtoRuntime, so `import FleetProtos` is enough.
    .target(name: "FleetProtosC", dependencies: ["ProtoRuntimeC", "CProtobufC"]),
    .target(name: "FleetProtos", dependencies: ["ProtoRuntime", "FleetProtosC", "CProtobufC"]),
    // grpc.testing, for the interop and benchmark services and clients.
    .target(name: "GRPCTestingProtosC", dependencies: ["CProtobufC"]),
    .target(
      name: "GRPCTestingProtos", dependencies: ["ProtoRuntime", "GRPCTestingProtosC", "CProtobufC"]),
    // gRPC's standard services: grpc.health.v1 and grpc.reflection (v1, v1alpha).
    .target(name: "GRPCServiceProtosC", dependencies: ["CProtobufC"]),
    .target(
      name: "GRPCServiceProtos", dependencies: ["ProtoRuntime", "GRPCServiceProtosC", "CProtobufC"]),
    // protoc's own schema (google/protobuf/descriptor.proto), through which the code generator
    // reads the FileDescriptorSet protoc writes; its own module, as no call needs it.
    .target(name: "ProtoDescriptorsC", dependencies: ["CProtobufC"]),
    .target(
      name: "ProtoDescriptors", dependencies: ["ProtoRuntime", "ProtoDescriptorsC", "CProtobufC"]),
    // Realistic messages shared by benchmarks and tests; not a product.
    .target(name: "FleetProtosFixtures", dependencies: ["FleetProtos"]),

    // MARK: gRPC

    // Our gRPC client and server over nghttp2: event loop, connections, calls, status. Knows
    // nothing of trips: of the messages, it depends on the runtime only.
    .target(
      name: "GRPCWire",
      dependencies: [
        "CNGHTTP2", "CZlib", "COpenSSL", "CGRPCSystem", "FleetSync", "ProtoRuntime",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    // Metrics (OpenTelemetry's RPC conventions, through swift-metrics) and tracing (through
    // swift-distributed-tracing) as client and server interceptors users could have written.
    .target(
      name: "GRPCObservability",
      dependencies: [
        "GRPCWire", "FleetSync",
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ]
    ),
    // A pthread-mutex lock ThreadSanitizer can see (Synchronization.Mutex uses raw futexes).
    .target(name: "FleetSync", dependencies: ["CSwiftRuntime"]),
    // swift_tryRetain, which Swift code may not name, for FleetSync's UnretainedReference.
    .target(name: "CSwiftRuntime"),
    // Linux calls Glibc's Swift module does not expose (epoll, eventfd, TCP_NODELAY).
    .target(name: "CGRPCSystem"),
    // grpc.health.v1.Health for a GRPCServer: per-service serving status set at run time,
    // answered to Check and streamed to Watch.
    .target(name: "GRPCHealth", dependencies: ["GRPCWire", "GRPCServiceProtos", "FleetSync"]),
    // grpc.reflection.v1 and v1alpha ServerReflection for a GRPCServer: its services, and the
    // .proto file descriptors CodeGen embeds in the message modules, for grpcurl and the like.
    // Of the messages it knows only the runtime and its own (GRPCServiceProtos): whoever builds
    // the server passes the lists of the modules its services use.
    .target(
      name: "GRPCReflection", dependencies: ["GRPCWire", "ProtoRuntime", "GRPCServiceProtos"]),

    // MARK: Following trips

    // TripService, TripModel, subscribers, authorization and retries over GRPCWire.
    .target(
      name: "FleetConsumer",
      dependencies: [
        "GRPCWire", "FleetProtos", "FleetSync", "FleetSigning",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]),
    // RS256 signatures with OpenSSL for the consumer tokens ServiceAccountTokenProvider mints,
    // behind a Swift-only API: FleetConsumer never sees a C type.
    .target(name: "FleetSigning", dependencies: ["COpenSSL"]),

    // MARK: Journey sharing

    // The trip as a picture: a rendering model (route by traffic, markers, camera) with the
    // Consumer SDK's style options, and a self-contained SVG renderer of it.
    .target(name: "JourneySharing", dependencies: ["FleetConsumer"]),
    // fleet-share's core: sealed share links and one follow per trip for any number of viewers.
    .target(
      name: "FleetShare",
      dependencies: [
        "FleetConsumer", "FleetSigning", "GRPCWire", "FleetSync", "JourneySharing",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
      ]),

    // MARK: Simulating Fleet Engine

    // An embedded Fleet Engine trip server on GRPCWire's server role: simulated vehicles,
    // versioned routes and traffic, token checks and fault injection.
    .target(
      name: "FleetSimulator",
      dependencies: [
        "GRPCWire", "FleetProtos", "FleetSync", "GRPCTestingServices", "GRPCTestingProtos",
        "GRPCHealth", "GRPCReflection",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]),
    // grpc.testing.TestService and BenchmarkService handlers, for interop-server and fleet-sim.
    .target(
      name: "GRPCTestingServices", dependencies: ["GRPCWire", "GRPCTestingProtos", "FleetSync"]),

    // MARK: Tools

    // What the fleet-* tools share: `--log-level`/`--log-format` (and the stderr log handler
    // behind them) as `@OptionGroup`s.
    .target(
      name: "FleetCommandLine",
      dependencies: [
        "GRPCWire", "GRPCObservability", "FleetConsumer", "FleetSync",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),

    // Encode/decode cost of a realistic Trip beside protobuf-c's own; see README "Benchmarks".
    .executableTarget(
      name: "fleet-codec-bench",
      dependencies: [
        "FleetCodecBenchmark", "FleetProtos",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // fleet-codec-bench's measurements, a product so Benchmarks/'s codec-bench runs the same
    // beside swift-protobuf's.
    .target(
      name: "FleetCodecBenchmark",
      dependencies: [
        "FleetProtos", "FleetProtosC", "FleetProtosFixtures", "CProtobufC", "CAllocationCounter",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .target(name: "CAllocationCounter"),
    // Follows one trip and prints what subscribers see (JSON lines with --json).
    .executableTarget(
      name: "fleet-follow",
      dependencies: [
        "FleetConsumer", "FleetSimulator", "FleetCommandLine",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    // The simulator as a server (`listening on HOST:PORT` first), for any gRPC client.
    .executableTarget(
      name: "fleet-sim",
      dependencies: [
        "FleetSimulator", "GRPCWire", "GRPCObservability", "FleetSync", "FleetCommandLine",
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Live share links: a page per trip, fed by one follow per trip (FleetShare).
    .executableTarget(
      name: "fleet-share",
      dependencies: [
        "FleetShare", "FleetConsumer", "FleetSimulator", "FleetSync", "GRPCObservability",
        "FleetCommandLine",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    // A ghz-like load generator: rate, latency percentiles, status codes, CPU per RPC.
    .executableTarget(
      name: "fleet-load",
      dependencies: [
        "GRPCWire", "FleetProtos", "GRPCTestingProtos", "FleetSimulator", "FleetConsumer",
        "FleetSync", "FleetCommandLine",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Histogram", package: "hdrhistogram-swift"),
      ]),
    // grpc.testing.TestService on our server role, for other implementations' clients.
    .executableTarget(
      name: "interop-server",
      dependencies: [
        "GRPCWire", "FleetSync", "GRPCTestingServices", "GRPCTestingProtos", "GRPCHealth",
        "GRPCReflection",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // The standard gRPC interop client (interop-test-descriptions.md flags and cases).
    .executableTarget(
      name: "interop-client",
      dependencies: [
        "GRPCWire", "GRPCTestingProtos",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),

    // MARK: Tests

    // Starts the Python peers of Tests/Python (Google's classes, grpcio, raw HTTP/2).
    .target(
      name: "PeerSupport",
      dependencies: ["FleetSync", .product(name: "Logging", package: "swift-log")],
      path: "Tests/PeerSupport"),
    .testTarget(
      name: "FleetProtosTests",
      dependencies: ["FleetProtos", "GRPCTestingProtos", "FleetProtosFixtures", "PeerSupport"]
    ),
    .testTarget(
      name: "GRPCWireTests",
      dependencies: [
        "GRPCWire", "ProtoRuntime", "GRPCTestingProtos", "PeerSupport", "FleetSync",
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
      ]),
    .testTarget(
      name: "GRPCObservabilityTests",
      dependencies: [
        "GRPCObservability", "GRPCWire", "GRPCTestingProtos", "FleetSync", "FleetConsumer",
        "FleetSimulator", "PeerSupport",
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(
      name: "FleetConsumerTests",
      dependencies: [
        "FleetConsumer", "FleetSimulator", "PeerSupport", "FleetSync",
        // TripMergeEquivalenceTests: generated responses from a fully populated trip.
        "FleetProtosFixtures",
      ]),
    .testTarget(
      name: "FleetSimulatorTests",
      dependencies: [
        "FleetSimulator", "GRPCWire", "GRPCTestingProtos", "GRPCServiceProtos", "PeerSupport",
        // ValidationTests: the simulator's errors fall in the category a follower expects.
        "FleetConsumer",
      ]),
    .testTarget(name: "FleetLoadTests", dependencies: ["PeerSupport"]),
    .testTarget(
      name: "FleetShareTests",
      dependencies: [
        "FleetShare", "FleetConsumer", "FleetSimulator", "GRPCWire", "FleetSync", "PeerSupport",
        "JourneySharing",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
      ]),
    .testTarget(
      name: "JourneySharingTests", dependencies: ["JourneySharing", "FleetConsumer", "PeerSupport"]),
    .testTarget(
      name: "OwnServiceTests",
      dependencies: ["GRPCWire", .product(name: "SwiftProtobuf", package: "swift-protobuf")]),
    .testTarget(
      name: "GRPCHealthTests",
      dependencies: ["GRPCHealth", "GRPCWire", "GRPCServiceProtos", "GRPCTestingProtos"]),
    .testTarget(
      name: "GRPCReflectionTests",
      dependencies: [
        "GRPCReflection", "GRPCHealth", "GRPCWire", "FleetProtos", "GRPCServiceProtos",
        "GRPCTestingProtos",
      ]),
    .testTarget(name: "ProtoDescriptorsTests", dependencies: ["ProtoDescriptors", "PeerSupport"]),
    .testTarget(name: "CModulesTests", dependencies: ["CNGHTTP2", "COpenSSL", "CZlib", "CProtobufC"]),
  ],
  swiftLanguageModes: [.v6]
)

// MARK: Fuzzing

// libFuzzer targets for the parsers that take a peer's bytes (README "Fuzzing"). Declared only
// with FLEET_FUZZ=1, as scripts/fuzz builds them: they need -sanitize=fuzzer and GRPCWire's
// internals (`@testable`, so -enable-testing in release), and the normal build, `swift test`
// and CI should not build or link them.
if Context.environment["FLEET_FUZZ"] == "1" {
  package.targets.append(
    .executableTarget(
      name: "fleet-fuzz",
      dependencies: [
        "GRPCWire", "FleetProtos", "FleetProtosFixtures", "GRPCTestingProtos",
        "GRPCTestingServices",
      ],
      path: "Fuzz/fleet-fuzz"))
}
