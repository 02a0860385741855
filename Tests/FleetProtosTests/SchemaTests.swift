import PeerSupport
import Testing

/// Our `.proto` files against the descriptors Google ships in its Python packages; the
/// comparison itself is `Tests/Python/check_schema.py`.
@Suite("Schema agreement with Google's descriptors")
struct SchemaTests {
  @Test("our protos declare exactly what Google's descriptors declare")
  func protosMatchGoogle() async throws {
    let output = try await PythonPeer.run("check_schema.py")
    // check_schema.py ends with "schema: N messages, M enums, K fields compared, D differences".
    let lastLine = output.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
    let matches = output.status == 0 && lastLine.hasSuffix(", 0 differences")
    if !matches { output.attach(as: "check_schema") }
    #expect(output.status == 0, "check_schema.py failed:\n\(output.transcript)")
    #expect(
      lastLine.hasSuffix(", 0 differences"),
      "check_schema.py's last line is \"\(lastLine)\":\n\(output.transcript)")
  }
}
