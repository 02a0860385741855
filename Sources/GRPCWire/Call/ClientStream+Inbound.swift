internal import FleetSync
internal import Logging

/// What arrives for the call (on the loop, inside mem_recv): headers, trailers and DATA,
/// handed to the caller, with flow-control credit returned as the caller reads.
extension ClientStream {
  /// A header block arrived: `fields`, which its connection collected (HTTP/2 sends a
  /// block's frames back to back, so one buffer per connection serves every stream).
  func receivedHeaders(_ fields: [HeaderField], endStream: Bool) {
    loop.assertInLoop()
    let action = machine.receiveResponseHeaders(fields, endStream: endStream)
    switch action {
    case .responseHead(let head):
      let waiters = shared.withLock { s in
        s.head = head
        // Committed, so never replayed: a request already sent whole (a server-streaming
        // call's, which may stay open for hours) lets its bytes go now, not with the stream.
        s.mailbox.commit()
        return s.headWaiters.exchange([])
      }
      for waiter in waiters { waiter.resume(returning: head.metadata) }
    case .finished(let outcome):
      // Trailers saying OK while part of a message is still buffered: the response was cut
      // short, and calling it a success would drop that message without a word.
      if case .success = outcome, deframer.bufferedByteCount > 0 {
        finish(
          .failure(
            RPCError(
              code: .internalError,
              message: "the server ended the call inside a message: \(deframer.bufferedByteCount) "
                + "bytes of an unfinished message were left over")),
          reset: false)
        return
      }
      finish(outcome, reset: false)
    case .protocolViolation(let error):
      finish(.failure(error), reset: true)
    case .ignore:
      break
    }
  }

  func receivedData(_ bytes: UnsafeRawBufferPointer) {
    loop.assertInLoop()
    switch machine.receiveData() {
    case .drop:
      // The call is over (we cancelled it); the bytes still count against the connection.
      connection?.consume(streamID: streamID, bytes.count, streamOpen: false)
    case .protocolViolation(let error):
      connection?.consume(streamID: streamID, bytes.count, streamOpen: false)
      finish(.failure(error), reset: true)
    case .accept(let encoding):
      let partialBefore = deframer.bufferedByteCount
      let frames: [MessageDeframer.Frame]
      do {
        frames = try deframer.append(bytes)
      } catch {
        connection?.consume(streamID: streamID, bytes.count, streamOpen: true)
        finish(.failure(Self.deframingError(error)), reset: true)
        return
      }
      var received: [Received] = []
      received.reserveCapacity(frames.count)
      let partialBytes = MessageDeframer.shareCredit(
        of: frames, bufferedBefore: partialBefore, readCount: bytes.count
      ) { frame, owed in received.append(Received(frame: frame, encoding: encoding, owed: owed)) }
      let owedByFrames = bytes.count - partialBytes
      if partialBytes > 0 { connection?.consume(streamID: streamID, partialBytes, streamOpen: true) }
      guard !received.isEmpty else { return }
      owedBytes += owedByFrames
      messagesReceived += received.count
      if oneResponse && messagesReceived > 1 {
        // doc/statuscodes.md: a response cardinality violation is UNIMPLEMENTED. Failed now,
        // not when the server ends the call (which may be never, or at the deadline).
        returnCredit(owedByFrames)
        fail(
          RPCError(
            code: .unimplemented,
            message: "a unary response must be exactly one message; the server sent a second one"),
          reset: true)
        return
      }
      deliver(received)
    }
  }

  func deliver(_ received: [Received]) {
    if let observer, observer.streamsMessages {
      // Called inside nghttp2's data callback: the observer may start or reset calls, so it
      // runs once the session is done. It has read each message when it returns.
      loop.execute { [self] in
        for message in received {
          observer.received(message, from: self)
          returnCredit(message.owed)
        }
      }
      return
    }
    let handed = shared.withLock { s in
      s.messagesDelivered += received.count
      return s.mailbox.deliver(received)
    }
    if let (reader, message) = handed {
      // Straight into a waiting reader: acknowledge now, no hop back needed.
      returnCredit(message.owed)
      reader.resume(returning: message)
    }
  }

  /// Returns the credit readers have accumulated since the last time.
  func returnHeldCredit() {
    let credit = shared.withLock { $0.mailbox.takeCredit() }
    if credit > 0 { returnCredit(credit) }
  }

  /// The caller has read messages worth `credit` bytes.
  func returnCredit(_ credit: Int) {
    loop.assertInLoop()
    guard !streamClosed else { return }
    owedBytes -= credit
    connection?.consume(streamID: streamID, credit, streamOpen: true)
  }
}
