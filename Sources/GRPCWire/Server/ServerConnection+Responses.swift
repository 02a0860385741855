/// Responses, as the session asks the connection about them (on the loop): a response
/// started, a reset that could not be queued. The streams submit their responses through the
/// session themselves (``ServerStream``'s `+Response`), and nghttp2 pulls their bodies from
/// them (``StreamCore/pullBody(into:resume:)``).
extension ServerConnection {

  /// A response's headers go out: PINGs that follow are fair, as after its data
  /// (``responseDataSent()``).
  func responseStarted() { pingStrikes = 0 }

  /// nghttp2 could not queue the reset of a response it refused (out of memory): the
  /// connection goes (soon: this may come from inside the data provider).
  func resetNotQueued(_ id: Int32) { closeSocketSoon() }
}
