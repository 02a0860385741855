import FleetShare
import Foundation
import Testing

/// Sealed share-link tokens: what opens, what does not, and what a token shows.
@Suite("Share links")
struct ShareLinksTests {
  let trip = "providers/demo-provider/trips/ride-42"
  let now: Int64 = 1_900_000_000

  func links(_ secret: String = "a link secret") throws -> ShareLinks {
    try ShareLinks(secret: Array(secret.utf8))
  }

  @Test("a token opens to its trip and expiry until the expiry, then is expired")
  func opens() throws {
    let links = try links()
    let token = try links.token(for: trip, expiresAt: now + 60)
    #expect(links.open(token, now: now) == .valid(tripName: trip, expiresAt: now + 60))
    #expect(links.open(token, now: now + 59) == .valid(tripName: trip, expiresAt: now + 60))
    #expect(links.open(token, now: now + 60) == .expired)
  }

  @Test("a token shows nothing of the trip, and two tokens for one trip differ")
  func hidden() throws {
    let links = try links()
    let token = try links.token(for: trip, expiresAt: now + 60)
    #expect(!token.contains("ride-42") && !token.contains("demo-provider"))
    let padded = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
      + String(repeating: "=", count: (4 - token.count % 4) % 4)
    let bytes = try #require(Data(base64Encoded: padded))
    #expect(bytes.range(of: Data("ride-42".utf8)) == nil, "the trip ID is in the token's bytes")
    #expect(try links.token(for: trip, expiresAt: now + 60) != token)
  }

  @Test("any changed character, another secret, a cut or garbage: invalid, never expired")
  func tampered() throws {
    let links = try links()
    let token = try links.token(for: trip, expiresAt: now + 60)
    var tried = 0
    for index in token.indices {
      var changed = token
      let replacement: Character = token[index] == "A" ? "B" : "A"
      changed.replaceSubrange(index...index, with: String(replacement))
      #expect(links.open(changed, now: now) == .invalid, "changed at \(token.distance(from: token.startIndex, to: index))")
      tried += 1
    }
    #expect(tried == token.count)
    #expect(try self.links("another secret").open(token, now: now) == .invalid)
    #expect(links.open(token.dropLast(4), now: now) == .invalid)
    for garbage in ["", "x", "!!!!", String(repeating: "A", count: 100), String(repeating: "A", count: 5_000)] {
      #expect(links.open(garbage, now: now) == .invalid)
    }
    // A forged token for a long-expired link is as unknown as any other: 404, not 410.
    let old = try links.token(for: trip, expiresAt: now - 3_600)
    #expect(links.open(old, now: now) == .expired)
    #expect(try self.links("another secret").open(old, now: now) == .invalid)
  }

  @Test("a token spelled otherwise than sealed (the unused bits of its last character set) does not open")
  func nonCanonical() throws {
    let links = try links()
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    var tried = 0
    // Three name lengths in a row: at least two give a byte count that leaves unused bits.
    for name in ["providers/p/trips/a", "providers/p/trips/ab", "providers/p/trips/abc"] {
      let token = try links.token(for: name, expiresAt: now + 60)
      guard token.count % 4 != 0 else { continue }
      let last = try #require(alphabet.firstIndex(of: token.last!))
      // The lowest bit of the last character never reaches a byte when bits are left over.
      let respelled = String(token.dropLast()) + String(alphabet[last ^ 1])
      #expect(links.open(token, now: now) == .valid(tripName: name, expiresAt: now + 60))
      #expect(links.open(respelled, now: now) == .invalid, "\(token) respelled \(respelled)")
      tried += 1
    }
    #expect(tried >= 2)
  }

  @Test("every link of one trip starts with the trip's routing prefix; other trips' differ; it shows nothing")
  func routingPrefix() throws {
    let links = try links()
    let prefix = try links.routingPrefix(for: trip)
    #expect(prefix.count == ShareLinks.routingPrefixLength)
    let first = try links.token(for: trip, expiresAt: now + 60)
    let second = try links.token(for: trip, expiresAt: now + 3_600)
    #expect(first != second)
    #expect(first.hasPrefix(prefix) && second.hasPrefix(prefix))
    let others = try (100..<150).map { try links.routingPrefix(for: "providers/demo-provider/trips/ride-\($0)") }
    #expect(Set(others + [prefix]).count == 51, "two trips share a routing prefix")
    #expect(try self.links("another secret").routingPrefix(for: trip) != prefix)
    #expect(!prefix.contains("ride") && !prefix.contains("demo"))
  }

  @Test("a link of the format before routing keys (version 1) still opens, and tampered does not")
  func versionOne() throws {
    let links = try links()
    // Sealed by the version-1 code for `trip`, expiring at now + 60 (IV 00 01 … 0f).
    let old =
      "AQABAgMEBQYHCAkKCwwNDg9zXnd1d1XnNtZoLEQu1cL6BOdMFuy-YZNra9iOHTw4w6W9glOzACvFOfzQgSfVCZ2_bjTbNpuPQNtMn90R0kBqF46ijl4h6JkuIKT8PQ"
    #expect(links.open(old, now: now) == .valid(tripName: trip, expiresAt: now + 60))
    #expect(links.open(old, now: now + 60) == .expired)
    var changed = old
    changed.removeLast()
    changed.append(old.last == "A" ? "B" : "A")
    #expect(links.open(changed, now: now) == .invalid)
    #expect(try self.links("another secret").open(old, now: now) == .invalid)
  }
}
