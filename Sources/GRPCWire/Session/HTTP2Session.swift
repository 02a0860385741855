internal import CNGHTTP2
internal import Glibc

/// The HTTP/2 half of a connection, for both roles: its socket (through a plain or TLS
/// ``ByteTransport``), its nghttp2 session with the one callback table, the bytes nghttp2
/// wants to send, and which readiness the loop watches for.
///
/// Loop-only, owned by one connection (its role), which it tells of every event. Reads go
/// into the loop's buffer and straight into `nghttp2_session_mem_recv`; everything nghttp2
/// queues during one loop tick goes out in one write at its end.
final class HTTP2Session: TickEndHandler {
  enum Role {
    case client, server
  }

  /// How a read ended when the connection did not go on.
  enum ReadEnd {
    /// The peer broke HTTP/2; nghttp2 has queued a GOAWAY saying how.
    case brokeProtocol(String)
    /// The peer closed the connection.
    case closed
    /// Reading failed, for the reason said.
    case failed(String)
  }

  let loop: EventLoop
  let fd: Int32
  /// Plain or TLS; nil before the role sets it (a client still connecting) and once closed.
  var transport: (any ByteTransport)?
  /// The nghttp2 session: nil before ``start(_:settings:)`` and after ``end()``.
  @exclusivity(unchecked) private(set) var nghttp2: OpaquePointer?
  /// Set by ``start(_:settings:)``.
  private(set) var sessionRole = Role.client
  /// What nghttp2's callbacks recorded and the role has not yet been told.
  ///
  /// This, ``recentHeaderTexts`` and ``writersToResume`` are changed in place by every
  /// callback (a dozen per call): their exclusivity is not checked at run time, as they are
  /// loop-only and no access to one of them spans a call that could reach it again (the
  /// callbacks record and return; the hand-over swaps the batch out before the role acts).
  @exclusivity(unchecked) var recorded = SessionEvents()
  /// The batch being handed to the role, while new events go to `recorded`.
  ///
  /// This, `handingOver`, the deferred tasks, the writers being resumed, the stream table and
  /// `nghttp2` are read or changed for every event handed over and every call's end (a dozen
  /// times per call): their exclusivity is not checked at run time either, as they are
  /// loop-only and no access to one of them spans a call into the role (the hand-over is
  /// not re-entered; the lists are swapped out before their tasks run).
  @exclusivity(unchecked) private var handing = SessionEvents()
  @exclusivity(unchecked) private var handingOver = false
  /// Whether recorded events are being handed to the role (``handOver()``).
  var isHandingOver: Bool { handingOver }
  /// What a stream deferred until the batch being handed over is through (a loop-driven
  /// call's end, which its driver must not hear inside the hand-over of its stream's close):
  /// run in order once the role has had the batch, outside nghttp2 (``afterBatch(_:)``).
  @exclusivity(unchecked) private var deferred: [any LoopTask] = []
  /// `deferred` being run, while new ones go there (swapped, keeping both capacities).
  @exclusivity(unchecked) private var runningDeferred: [any LoopTask] = []
  /// Writers whose room nghttp2's data providers made (inside mem_send): resumed once it
  /// has returned.
  @exclusivity(unchecked) var writersToResume: [CheckedContinuation<Void, any Error>] = []
  /// The writers being resumed, while new ones go to `writersToResume` (swapped, so that
  /// neither array gives up its capacity).
  @exclusivity(unchecked) private var resuming: [CheckedContinuation<Void, any Error>] = []
  /// The input of the `nghttp2_session_mem_recv` running, whose DATA the callbacks record
  /// where it lies instead of copying it (``SessionEvents/data(streamID:_:lent:)``); nil
  /// outside it.
  private(set) var lentInput: UnsafeRawBufferPointer?
  /// The header texts received lately that are not common ones (see RecentHeaderTexts).
  @exclusivity(unchecked) var recentHeaderTexts = RecentHeaderTexts()
  /// Unowned: the role owns the session. Calls into the role come from its own calls
  /// (mem_recv, mem_send), from the flush it scheduled (which holds it: `flushOwed`), and
  /// from a stream's own hops on the loop (a handler's answer, a call cancelled or past its
  /// deadline, a handler dropping its connection: ``submitResponse(_:_:body:)``,
  /// ``cancel(_:deadlinePassed:)``, ``dropConnection()``). Each of those checks `nghttp2`
  /// first, and the role ends the session before it goes: it ends it on the loop as it
  /// closes, then clears this (its deinit does both when its loop stopped first). Loop-only,
  /// like the rest.
  unowned(unsafe) var role: (any HTTP2SessionRole)?
  /// The open streams, by ID: the one stream table, for both roles (its streams are all of
  /// the role's type). Changed only through `HTTP2Session+Streams`; emptied by ``end()``.
  @exclusivity(unchecked) var streams: [Int32: StreamCore] = [:]
  /// The stream ``stream(_:)`` found last; always one of `streams`.
  @exclusivity(unchecked) var lastFound: StreamCore?
  private var output = SessionOutput()
  private var interest: EventLoop.Interest
  /// The role, held until the end-of-tick flush it is owed has run.
  private var flushOwed: (any HTTP2SessionRole)?
  private var socketOpen = true

  /// `fd`: a connected (or connecting) socket, watched for `interest` so far.
  init(loop: EventLoop, fd: Int32, interest: EventLoop.Interest = []) {
    self.loop = loop
    self.fd = fd
    self.interest = interest
  }

  deinit {
    if let nghttp2 { nghttp2_session_del(nghttp2) }
    transport?.close()
  }

  /// Makes the nghttp2 session and queues our SETTINGS (the client's preface goes first);
  /// false if nghttp2 cannot (out of memory).
  func start(_ role: Role, settings: HTTP2Settings) -> Bool {
    sessionRole = role
    let session = makeSession(role, userData: Unmanaged.passUnretained(self).toOpaque())
    nghttp2 = session
    return settings.submit(to: session)
  }

  /// Whether nghttp2 wants neither to read nor to write: the session is over.
  var isOver: Bool {
    guard let nghttp2 else { return true }
    return nghttp2_session_want_read(nghttp2) == 0 && nghttp2_session_want_write(nghttp2) == 0
  }

  // MARK: I/O

  func setInterest(_ wanted: EventLoop.Interest) {
    guard socketOpen, let role else { return }
    loop.changeInterest(fd, from: &interest, to: wanted, role)
  }

  /// Reads what is there, up to `budget`, so one busy connection cannot starve the loop;
  /// nil while the connection goes on (a flush is then scheduled), else why it ended.
  func read(_ budget: ReadBudget) -> ReadEnd? {
    guard let transport, let nghttp2, let role else { return nil }
    // DATA goes to the role straight from the buffer it was read into (SessionEvents): the
    // loop lends it until the batch has been handed over (EventLoop.withReadBuffer).
    return loop.withReadBuffer(size: min(budget.bytes, role.readSlice)) { buffer in
      read(budget, into: buffer, transport: transport, nghttp2: nghttp2, role: role)
    }
  }

  private func read(
    _ budget: ReadBudget, into buffer: UnsafeMutableRawBufferPointer,
    transport: any ByteTransport, nghttp2: OpaquePointer, role: any HTTP2SessionRole
  ) -> ReadEnd? {
    for _ in 0..<budget.reads {
      switch transport.read(into: buffer) {
      case .bytes(let count):
        lentInput = UnsafeRawBufferPointer(rebasing: buffer[..<count])
        loop.insideNGHTTP2 = true
        let consumed = nghttp2_session_mem_recv(
          nghttp2, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
        loop.insideNGHTTP2 = false
        lentInput = nil
        handOver()
        // Handed over, unless this read is nested in a hand-over of this session's own
        // events, which takes them after it: they get copies before the buffer is read into
        // again (or freed).
        recorded.keepLentBytes()
        if consumed < 0 { return .brokeProtocol(nghttp2Error(Int32(consumed))) }
        guard role.readProcessed() else { return nil }
        // A short read drained the socket, unless TLS inside TLS (an https:// proxy) still
        // holds decrypted bytes the socket will not announce again.
        if count < buffer.count, !transport.hasBufferedInput {
          scheduleFlush()
          return nil
        }
      case .wouldBlock(let wantWrite):
        if wantWrite { setInterest([.read, .write]) }
        scheduleFlush()
        return nil
      case .closed:
        return .closed
      case .failed(let reason):
        return .failed(reason)
      }
    }
    // Out of budget: the socket says when more is there, but not of bytes TLS already holds.
    if transport.hasBufferedInput {
      // Read again in a later task of this loop, which owns the role.
      let again = LoopBound(role, on: loop)
      loop.execute { again.value.readable() }
    }
    scheduleFlush()
    return nil
  }

  /// Flushes at the end of this tick (once, however often asked).
  func scheduleFlush() {
    guard flushOwed == nil, transport != nil, let role else { return }
    flushOwed = role
    loop.runAtEndOfTick(self)
  }

  func tickEnded() {
    let role = flushOwed
    flushOwed = nil
    role?.flush()
  }

  /// Moves what nghttp2 wants to send into the output buffer and writes it, many frames per
  /// write; then watches for what comes next (reads, and writes while the socket is full).
  func flush() -> SessionOutput.Outcome {
    guard let nghttp2, let transport else { return .drained }
    var outcome: SessionOutput.Outcome
    repeat {
      loop.insideNGHTTP2 = true
      outcome = output.flush(nghttp2, through: transport)
      loop.insideNGHTTP2 = false
      // Streams closed and writers given room while sending; what the role does about them
      // may queue more to send.
    } while handOver() && self.nghttp2 != nil && self.transport != nil && outcome.isDrained
    switch outcome {
    case .drained: setInterest(.read)
    case .wouldBlock(let wantWrite): setInterest(wantWrite ? [.read, .write] : .read)
    case .closed, .writeFailed, .sessionFailed: break
    }
    return outcome
  }

  /// Whether blocks of `kind` keep their fields: a server reads requests' headers only
  /// (nothing in request trailers matters to gRPC); a client reads every block.
  func keepsFields(of kind: ReceivedHeaders.Kind) -> Bool {
    sessionRole == .client || kind == .request
  }

  /// Whether frames of `type` (other than HEADERS and GOAWAY) are recorded for the role: a
  /// server acts on every frame (keepalive's last-frame time, END_STREAM and tiny frames of
  /// DATA); a client on SETTINGS and PING only, so a streamed response's DATA frames make one
  /// event each (their bytes), not two.
  func recordsFrame(ofType type: UInt8) -> Bool {
    sessionRole == .server || type == UInt8(NGHTTP2_SETTINGS.rawValue)
      || type == UInt8(NGHTTP2_PING.rawValue)
  }

  /// Hands what nghttp2's callbacks recorded to the role, in order, and resumes the writers
  /// its data providers made room for; outside nghttp2's callbacks. Events recorded while
  /// the role acts (a flush of its own) follow in the same call. Returns whether there was
  /// anything.
  @discardableResult
  func handOver() -> Bool {
    loop.checkOutsideCallbacks()
    guard !handingOver, !recorded.isEmpty || !writersToResume.isEmpty else { return false }
    handingOver = true
    defer { handingOver = false }
    while !recorded.isEmpty || !writersToResume.isEmpty {
      if !writersToResume.isEmpty {
        swap(&writersToResume, &resuming)
        for writer in resuming { writer.resume() }
        resuming.removeAll(keepingCapacity: true)
      }
      // A writer resumed may have deferred an end too: it runs before this call returns.
      guard !recorded.isEmpty else {
        runDeferred()
        continue
      }
      swap(&recorded, &handing)
      // A header block split across two reads: its fields so far wait for the rest.
      handing.carryOpenBlock(to: &recorded)
      if let role { deliver(handing, to: role) }
      runDeferred()
      handing.removeAll()
    }
    return true
  }

  /// Runs `task` once the batch being handed over is through (``isHandingOver`` must be true):
  /// after every event of it, outside nghttp2's callbacks, before the next batch.
  func afterBatch(_ task: any LoopTask) {
    loop.checkInLoop()
    precondition(handingOver, "afterBatch outside a hand-over")
    deferred.append(task)
  }

  private func runDeferred() {
    // What a deferred task does may defer more (a driver closing its channel ends more of
    // this session's calls): theirs follow in this same call.
    while !deferred.isEmpty {
      swap(&deferred, &runningDeferred)
      for task in runningDeferred { task.runOnLoop() }
      runningDeferred.removeAll(keepingCapacity: true)
    }
  }

  private func deliver(_ batch: SessionEvents, to role: any HTTP2SessionRole) {
    batch.bytes.withUnsafeBytes { bytes in
      for event in batch.events {
        // The role ended the session while this batch was handed out (a connection that
        // closes as its last call ends): the rest of the batch is about streams that are
        // over, and a role hears nothing of a session it has ended.
        guard nghttp2 != nil else { return }
        switch event {
        // The session finds each event's stream (a request's headers begin one: none yet)
        // and hands it over, so the role looks up nothing: one table, looked up once.
        case .headers(let headers, let block):
          role.headersReceived(
            headers, fields: block >= 0 ? batch.blocks[block] : [],
            stream: headers.kind == .request ? nil : stream(headers.streamID))
        case .frame(let frame):
          role.frameReceived(frame)
        case .goAway(let lastStreamID, let errorCode, let start, let count):
          role.goAwayReceived(
            lastStreamID: lastStreamID, errorCode: errorCode,
            debugData: String(decoding: bytes[start..<(start + count)], as: UTF8.self))
        case .data(let streamID, let start, let count):
          role.dataReceived(
            streamID: streamID, UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]),
            stream: stream(streamID))
        case .lentData(let streamID, let chunk):
          role.dataReceived(streamID: streamID, chunk, stream: stream(streamID))
        case .streamClosed(let streamID, let errorCode):
          role.streamClosed(streamID, errorCode: errorCode, stream: removeStream(streamID))
        case .headersRejected(let streamID, let libError):
          role.headersRejected(streamID: streamID, reason: nghttp2Error(libError))
        }
      }
    }
  }

  // MARK: Closing

  /// Stops watching the socket and closes it (with its TLS); nghttp2's session stays, for the
  /// role to read its streams from, until ``end()``.
  func closeTransport() {
    guard socketOpen else { return }
    setInterest([])
    socketOpen = false
    if let transport {
      self.transport = nil
      transport.close()
    } else {
      Glibc.close(fd)
    }
  }

  /// Releases nghttp2's session.
  func end() {
    // Its streams hold the session: the table goes with it, so that neither keeps the other.
    streams.removeAll()
    lastFound = nil
    guard let nghttp2 else { return }
    self.nghttp2 = nil
    nghttp2_session_del(nghttp2)
  }
}

/// nghttp2's text for one of its error codes.
func nghttp2Error(_ code: Int32) -> String {
  String(cString: nghttp2_strerror(code))
}
