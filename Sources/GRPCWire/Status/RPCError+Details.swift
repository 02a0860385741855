public import ProtoRuntime

extension RPCError {
  /// The error for a status the server sent, with its `google.rpc.Status` details decoded.
  ///
  /// Never fails and never traps on hostile bytes: details that cannot be used leave
  /// ``details`` empty (or a detail `.other`) and say why in ``detailsProblem``, and the code
  /// stays `status.code` whatever the details claim.
  public init(status: Status, metadata: Metadata) {
    self.init(code: status.code, message: status.message, metadata: metadata)
    guard let bytes = status.detailsBytes else { return }
    receivedDetailsBytes = bytes
    (details, detailsProblem) = Self.decodeDetails(bytes, wireCode: status.code)
  }

  /// The error for received trailer values: `grpc-status`, `grpc-message` and
  /// `grpc-status-details-bin` as they arrived, undecoded.
  ///
  /// The status and message are read as by
  /// ``Status/init(grpcStatus:grpcMessage:detailsBytes:)``; a `grpc-status-details-bin` that is
  /// not base64 sets ``detailsProblem``.
  public init(
    grpcStatus: some StringProtocol, grpcMessage: String?, grpcStatusDetailsBin: String?,
    metadata: Metadata
  ) {
    let bytes = grpcStatusDetailsBin.flatMap { Status.detailsBytes(fromHeaderValue: $0) }
    self.init(
      status: Status(grpcStatus: grpcStatus, grpcMessage: grpcMessage, detailsBytes: bytes),
      metadata: metadata)
    isFromServer = true
    if let grpcStatusDetailsBin, bytes == nil {
      detailsProblem =
        "grpc-status-details-bin (\(grpcStatusDetailsBin.utf8.count) characters) "
        + "is not base64"
    }
  }

  /// The code, the message and the details, to pass the error on (a proxy, a server role).
  ///
  /// `detailsBytes` are the bytes received, unchanged; for an error made here, the encoding of
  /// a `google.rpc.Status` holding ``details``, or nil when there are none.
  public var status: Status {
    var bytes = receivedDetailsBytes
    if bytes == nil, !details.isEmpty {
      var rpcStatus = GoogleRPC.Status()
      rpcStatus.code = Int32(code.rawValue)
      rpcStatus.message = message
      rpcStatus.details = details.map(\.packed)
      bytes = rpcStatus.serializedBytes()
    }
    return Status(code: code, message: message, detailsBytes: bytes)
  }

  static func decodeDetails(_ bytes: [UInt8], wireCode: StatusCode) -> (
    details: [ErrorDetail], problem: String?
  ) {
    let rpcStatus: GoogleRPC.Status
    do {
      rpcStatus = try GoogleRPC.Status(serializedBytes: bytes)
    } catch {
      return ([], "grpc-status-details-bin is not a google.rpc.Status: \(error)")
    }
    // gRPC's own libraries (e.g. grpc-java's StatusProto) refuse a google.rpc.Status whose code
    // differs from grpc-status: details written for another outcome are not trusted.
    guard rpcStatus.code == Int32(wireCode.rawValue) else {
      let claimed = StatusCode(rawValue: Int(rpcStatus.code)).map(\.name) ?? "\(rpcStatus.code)"
      return (
        [],
        "grpc-status-details-bin carries code \(claimed) but grpc-status is \(wireCode.name); "
          + "its \(rpcStatus.details.count) details were ignored"
      )
    }
    var details: [ErrorDetail] = []
    details.reserveCapacity(rpcStatus.details.count)
    var problems: [String] = []
    for (index, any) in rpcStatus.details.enumerated() {
      do {
        details.append(try ErrorDetail.unpack(any) ?? .other(any))
      } catch {
        details.append(.other(any))
        problems.append("detail \(index) (\(any.messageName)) kept undecoded: \(error)")
      }
    }
    return (details, problems.isEmpty ? nil : problems.joined(separator: "; "))
  }
}

extension RPCError {
  /// The first `ErrorInfo` detail: the reason, its domain and facts.
  public var errorInfo: GoogleRPC.ErrorInfo? {
    firstDetail { if case .errorInfo(let value) = $0 { value } else { nil } }
  }

  /// The first `RetryInfo` detail.
  public var retryInfo: GoogleRPC.RetryInfo? {
    firstDetail { if case .retryInfo(let value) = $0 { value } else { nil } }
  }

  /// How long the server asks the client to wait before retrying; nil without a `RetryInfo`
  /// that has a delay. A negative delay is reported as zero.
  public var retryDelay: Duration? {
    retryInfo?.retryDelay.map { max($0.duration, .zero) }
  }

  /// The first `BadRequest` detail: which fields are invalid and why.
  public var badRequest: GoogleRPC.BadRequest? {
    firstDetail { if case .badRequest(let value) = $0 { value } else { nil } }
  }

  /// The first `QuotaFailure` detail.
  public var quotaFailure: GoogleRPC.QuotaFailure? {
    firstDetail { if case .quotaFailure(let value) = $0 { value } else { nil } }
  }

  /// The first `PreconditionFailure` detail.
  public var preconditionFailure: GoogleRPC.PreconditionFailure? {
    firstDetail { if case .preconditionFailure(let value) = $0 { value } else { nil } }
  }

  /// The first `ResourceInfo` detail.
  public var resourceInfo: GoogleRPC.ResourceInfo? {
    firstDetail { if case .resourceInfo(let value) = $0 { value } else { nil } }
  }

  /// The first `RequestInfo` detail: the ID to quote in a support case.
  public var requestInfo: GoogleRPC.RequestInfo? {
    firstDetail { if case .requestInfo(let value) = $0 { value } else { nil } }
  }

  /// The first `Help` detail.
  public var help: GoogleRPC.Help? {
    firstDetail { if case .help(let value) = $0 { value } else { nil } }
  }

  /// The first `LocalizedMessage` detail.
  public var localizedMessage: GoogleRPC.LocalizedMessage? {
    firstDetail { if case .localizedMessage(let value) = $0 { value } else { nil } }
  }

  /// The first `DebugInfo` detail; for developers, not end users.
  public var debugInfo: GoogleRPC.DebugInfo? {
    firstDetail { if case .debugInfo(let value) = $0 { value } else { nil } }
  }

  private func firstDetail<T>(_ extract: (ErrorDetail) -> T?) -> T? {
    for detail in details {
      if let value = extract(detail) { return value }
    }
    return nil
  }
}
