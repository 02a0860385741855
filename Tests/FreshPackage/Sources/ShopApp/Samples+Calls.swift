/// Which samples each call sends, whichever messages the samples are built of.
extension Samples {
  /// The numbers of the orders each call sends: PlaceOrder's request and response,
  /// ListOrders' responses, UploadOrders' requests, TrackOrders' requests and answers.
  static let placeRequest = 1
  static let placeResponse = 2
  static let listed = 10..<13
  static let uploaded = 20..<23
  static let tracked = 30..<33
  static let trackAnswerOffset = 10
}
