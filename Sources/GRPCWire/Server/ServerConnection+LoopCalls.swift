/// Unary calls answered on the loop (``LoopHandler``): no task, no hop, within the tick that
/// brought the request.
extension ServerConnection {
  /// Answers the calls whose requests ended during the last mem_recv, in the order they
  /// ended. Runs outside nghttp2's callbacks, so answering may submit frames.
  func answerReadyCalls() {
    guard !readyOnLoop.isEmpty else { return }
    let ready = readyOnLoop
    readyOnLoop.removeAll(keepingCapacity: true)
    for stream in ready { answer(stream) }
  }

  private func answer(_ stream: ServerStream) {
    guard let handler = stream.loopHandler, let context = stream.context,
      !stream.machine.isClosed
    else { return }
    stream.loopHandler = nil
    // A spent budget means writers already wait for room: this response waits its turn
    // behind them, in a task, before it is serialised, as any handler's write would.
    guard sendBudget.hasRoom else {
      stream.handlerTask = Task(executorPreference: loop) { await handler.task(stream, context) }
      return
    }
    let status: Status
    do {
      try handler.answer(stream, context)
      status = .ok
    } catch {
      status = Status(handlerError: error)
    }
    // False when the call ended meanwhile (its deadline passed, or it broke a rule): that
    // ending has already sent the status.
    if stream.setStatus(status, context.trailingMetadata) { stream.finishResponse() }
  }
}
