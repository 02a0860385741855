/// One header field as nghttp2 delivered it (names are lowercase, as HTTP/2 requires).
struct HeaderField {
  var name: String
  var value: String
}
