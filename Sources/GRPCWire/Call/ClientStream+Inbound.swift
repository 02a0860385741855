internal import FleetSync
internal import Logging

/// What arrives for the call (on the loop, handed over by the session once mem_recv has
/// returned): headers, trailers and DATA, handed to the caller, with flow-control credit
/// returned as the caller reads.
extension ClientStream {
  /// A header block arrived: `fields`, which its connection collected (HTTP/2 sends a
  /// block's frames back to back, so one buffer per connection serves every stream).
  func receivedHeaders(_ fields: [HeaderField], endStream: Bool) {
    loop.checkInLoop()
    loop.checkOutsideCallbacks()
    let action = machine.receiveResponseHeaders(fields, endStream: endStream)
    switch action {
    case .responseHead(let head):
      let waiters = withShared { s in
        s.head = head
        // Committed, so never replayed: a request already sent whole (a server-streaming
        // call's, which may stay open for hours) lets its bytes go now, not with the stream.
        mailbox.commit()
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
    loop.checkInLoop()
    switch machine.receiveData() {
    case .drop:
      // The call is over (we cancelled it); the bytes still count against the connection.
      acknowledge(bytes.count, streamOpen: false)
    case .protocolViolation(let error):
      acknowledge(bytes.count, streamOpen: false)
      finish(.failure(error), reset: true)
    case .accept(let encoding):
      // A loop-driven unary call's response is not copied out of the DATA the session is
      // handing over: its end, in the same batch as a rule, decodes it there.
      let lending = unaryReceiver != nil && session?.isHandingOver == true
      var firstLent: UnsafeRawBufferPointer? = nil
      let inbound: StreamCore.Inbound<Received>
      do {
        inbound = try receive(bytes, lending: lending) { frame, lent, owed in
          if firstLent == nil { firstLent = lent }
          return Received(frame: frame, encoding: encoding, owed: owed)
        }
      } catch {
        acknowledge(bytes.count, streamOpen: true)
        // Closes the machine too: DATA still arriving is dropped, not deframed from the
        // middle of the refused message and handed on after the end.
        fail(Self.deframingError(error), reset: true)
        return
      }
      if inbound.partialBytes > 0 {
        acknowledge(inbound.partialBytes, streamOpen: true)
      }
      guard let first = inbound.first else { return }
      owe(inbound.owedByMessages)
      messagesReceived += 1 + inbound.more.count
      if oneResponse && messagesReceived > 1 {
        // doc/statuscodes.md: a response cardinality violation is UNIMPLEMENTED. Failed now,
        // not when the server ends the call (which may be never, or at the deadline).
        readerTook(inbound.owedByMessages)
        fail(
          RPCError(
            code: .unimplemented,
            message: "a unary response must be exactly one message; the server sent a second one"),
          reset: true)
        return
      }
      if let firstLent, !endQueued, let session {
        // Kept, or copied once the batch is through if the call goes on (runOnLoop).
        unaryResponse = first
        unaryLent = firstLent
        session.afterBatch(self)
        return
      }
      deliver(first, inbound.more)
    }
  }

  /// Hands `first` and then `more`, complete messages in order, to the observer or the caller.
  func deliver(_ first: Received, _ more: [Received]) {
    loop.checkOutsideCallbacks()
    // Nothing after the end is queued: an observer hears every message before it.
    guard !endQueued else { return }
    if unaryReceiver != nil {
      // A loop-driven unary call (one response: a second has failed it): the message waits
      // here, loop-side, for the end; its credit comes back as the stream closes.
      unaryResponse = first
      return
    }
    if let observer {
      // Outside nghttp2's callbacks (the session hands DATA over once mem_recv has returned):
      // the observer may start or reset calls. It has read each message when it returns.
      observer.received(first, from: self)
      readerTook(first.owed)
      for message in more {
        observer.received(message, from: self)
        readerTook(message.owed)
      }
      return
    }
    let handed = withShared { s in
      s.messagesDelivered += 1 + more.count
      let handed = mailbox.deliver(first)
      if !more.isEmpty { _ = mailbox.deliver(more) }
      return handed
    }
    if let (reader, message) = handed {
      // Straight into a waiting reader: acknowledge now, no hop back needed.
      readerTook(message.owed)
      reader.resume(returning: message)
    }
  }
}
