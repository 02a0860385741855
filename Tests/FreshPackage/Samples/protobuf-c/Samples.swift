import ShopProtos

/// The messages both sides of every call expect, over our own messages (`--messages
/// protobuf-c`), built as `shop_peer.py`'s `Samples` (and Samples/swift-protobuf's) build
/// them: each side compares what it receives with its own copy, so a field lost or changed
/// on the wire in either direction fails the call.
enum Samples {
  static let query = Shop.OrderQuery.with { $0.customer = "ada"; $0.limit = 3 }

  static func item(_ n: Int) -> AcmeCatalogV1.Item {
    var item = AcmeCatalogV1.Item()
    item.sku = "SKU-\(n)"
    item.title = "Item \(n) — ünïcødé ✓"
    item.category = n % 2 == 0 ? .book : .tool
    item.priceCents = 1_000_000_000_000 + Int64(n)
    item.tags = ["t\(n)", "", "tag with space"]
    item.thumbnail = [0, 255, UInt8(n % 256), 0x80, 10]
    item.stockByStore = ["berlin": Int32(n), "paris": -Int32(n) - 1, "": 7]
    item.added = GoogleProtobuf.Timestamp.with {
      $0.seconds = 1_700_000_000 + Int64(n)
      $0.nanos = 123_456_789
    }
    var dimensions = AcmeCatalogV1.Item.Dimensions()
    dimensions.width = 1.5 * Double(n)
    dimensions.height = -0.25
    dimensions.weight = 3.25
    item.dimensions = dimensions
    return item
  }

  static func line(_ n: Int) -> Shop.Order.Line {
    var line = Shop.Order.Line()
    line.item = item(n)
    line.quantity = 4_000_000_000 + UInt32(n)
    line.adjustments = [-1, 0, Int32(n), Int32.min, Int32.max]
    return line
  }

  static func order(_ n: Int) -> Shop.Order {
    var order = Shop.Order()
    order.id = "order-\(n)"
    order.status = n % 2 == 0 ? .open : .shipped
    order.lines = [line(n), line(n + 1)]
    order.gifts = ["g\(n)": line(n + 2), "empty": Shop.Order.Line()]
    switch n % 3 {
    case 0: order.payment = .cardToken("tok-\(n)")
    case 1: order.payment = .voucher([UInt8(n % 256), 0, 1, 2])
    default: order.payment = .account(0xFFFF_FFFF_FFFF_FF00 + UInt64(n))
    }
    order.deliveryWindow = GoogleProtobuf.Duration.with {
      $0.seconds = Int64(n) * 60
      $0.nanos = 500_000_000
    }
    // Present but empty, and absent: a wrapper keeps the difference.
    order.note = n % 2 == 0 ? "note \(n)" : ""
    order.priority = n % 2 == 0 ? nil : -Int32(n)
    order.giftWrap = false
    order.placed = GoogleProtobuf.Timestamp.with { $0.seconds = 1_600_000_000 + Int64(n) }
    order.express = n % 2 == 1
    order.zone = -Int32(n) - 5
    order.weightGrams = UInt64.max - UInt64(n)
    order.balance = -Int32(n) * 1000
    // 7 is no value of the enum: kept as unrecognized, and sent back as 7.
    order.categories = [.book, .tool, .unspecified, .unrecognized(7)]
    return order
  }

  /// What UploadOrders answers for `orders`.
  static func summary(of orders: [Shop.Order]) -> Shop.OrderSummary {
    var summary = Shop.OrderSummary()
    summary.count = Int32(orders.count)
    summary.totalCents = orders.reduce(0) { total, order in
      total + order.lines.reduce(0) { $0 + ($1.item?.priceCents ?? 0) }
    }
    summary.ids = orders.map(\.id)
    return summary
  }
}

extension ProtoMessage {
  /// A message built by `body`.
  static func with(_ body: (inout Self) -> Void) -> Self {
    var message = Self()
    body(&message)
    return message
  }
}
