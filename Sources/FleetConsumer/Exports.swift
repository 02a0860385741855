// What a FleetConsumer user needs from the layers below, so that `import FleetConsumer` is
// enough: the Fleet Engine message types (a trip, its status, locations, waypoints) and the
// io.grpc error taxonomy. GRPCWire itself (channels, calls) stays an implementation detail.

@_exported public import FleetProtos
public import GRPCWire

/// A failed trip update: a gRPC status code, a message a person can act on, Google's error
/// details, and a ``RPCError/category`` saying who recovers. Bridges to `NSError` in the
/// domain `io.grpc`, as the errors of Fleet Engine's consumer SDKs do.
///
/// Docs/ErrorTaxonomy.md lists every code with what the caller should do.
public typealias RPCError = GRPCWire.RPCError

/// One of the 17 gRPC status codes; see ``RPCError/code``.
public typealias StatusCode = GRPCWire.StatusCode

/// A decoded Google error detail (`ErrorInfo`, `RetryInfo`, `BadRequest`, …) of an error.
public typealias ErrorDetail = GRPCWire.ErrorDetail

/// The metadata (trailers) an error carries; `description` masks credentials.
public typealias Metadata = GRPCWire.Metadata

/// Code that runs around every call the service makes (``TripService/Options/interceptors``);
/// GRPCObservability has metrics and tracing ones, and `import GRPCWire` gives the types to
/// write your own.
public typealias ClientInterceptor = GRPCWire.ClientInterceptor
