import Testing

@Suite struct PlaceholderTests {
  @Test("the target builds") func builds() {}
}
