/// The comparison of a message with its protobuf-c struct in place, without decoding it
/// (`matches(cMessage:)`): how a decode shares a value it already holds (see
/// MessageWriter+Bridge.swift and ProtoC+Matching.swift).
extension MessageWriter {
  /// `matches(cMessage:)`: whether the C message decodes to exactly this value, read in place
  /// (see ProtoC+Matching.swift). A map compares as equal only when both are empty: false for
  /// equal maps only costs the caller a decode, and maps never change on a hot path.
  mutating func matches(_ b: Bridge) {
    line(
      "  @_spi(GeneratedCode) public func matches(cMessage c: UnsafePointer<\(b.cType)>) -> Bool {")
    if !b.message.field.isEmpty { line("    let m = c.pointee") }
    for f in b.plain {
      let c = "m.\(f.cMember)"
      if let presentIf = f.presentIf {
        line("    if \(presentIf) {")
        line("      guard let h = \(f.id), \(sameValue(f, "h", c)) else { return false }")
        line("    } else if \(f.id) != nil {")
        line("      return false")
        line("    }")
      } else if f.map {
        line("    guard \(f.id).isEmpty && m.\(f.cQuantifier ?? "") == 0 else { return false }")
      } else if f.repeated {
        let n = "m.\(f.cQuantifier ?? "")"
        if f.kind == .message {
          line("    guard ProtoC.sameMessages(\(f.id), \(c), \(n)) else { return false }")
        } else {
          line(
            "    guard ProtoC.sameElements(\(f.id), \(c), \(n), { h, v in \(sameValue(f, "h", "v")) }) else { return false }"
          )
        }
      } else if f.kind == .message {
        line("    guard ProtoC.same(\(f.id), \(c)) else { return false }")
      } else if case .wrapper(let kind) = f.kind {
        let same =
          switch kind {
          case "int": "h == p.pointee.value"
          case "bool": "h == (p.pointee.value != 0)"
          default: "ProtoC.same(h, p.pointee.value)"
          }
        line("    if let p = \(c) {")
        line("      guard let h = \(f.id), \(same) else { return false }")
        line("    } else if \(f.id) != nil {")
        line("      return false")
        line("    }")
      } else {
        line("    guard \(sameValue(f, f.id, c)) else { return false }")
      }
    }
    for oneof in b.oneofs {
      let name = b.message.oneofDecl[oneof.index].name ?? ""
      let caseValue = "m.\(name.lowercased())_case.rawValue"
      line("    switch \(oneofProperty(name)) {")
      for f in oneof.members {
        let same = sameValue(f, "v", "m." + f.cMember)
        line(
          "    case .\(f.id)(let v)?: guard \(caseValue) == \(f.number), \(same) else { return false }"
        )
      }
      let known = oneof.members.map { "\(caseValue) == \($0.number)" }.joined(separator: " || ")
      line("    case nil: if \(known) { return false }")
      line("    }")
    }
    line("    return unknownFields.matches(cMessage: c)")
    line("  }")
  }

  /// A Bool expression: whether the C value `expr` decodes to `held` (one value).
  private func sameValue(_ f: MessageField, _ held: String, _ expr: String) -> String {
    switch f.kind {
    case .plain, .string, .bytes: "ProtoC.same(\(held), \(expr))"
    case .bool: "\(held) == (\(expr) != 0)"
    case .enumeration:
      "\(held) == \(f.swift)(rawValue: Int32(truncatingIfNeeded: \(expr).rawValue))"
    case .message: "ProtoC.sameMember(\(held), \(expr))"
    // A wrapper is compared in place in `matches`; a presence-tracked proto2 wrapper field
    // reads like a message.
    case .wrapper: "ProtoC.sameMember(\(held), \(expr))"
    }
  }
}
