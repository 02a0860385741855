"""grpcio's side of the fresh-package test (scripts/test-fresh-package): acme.shop.v1's
OrderService from Tests/FreshPackage/Protos, with `_pb2` and `_pb2_grpc` modules that
grpcio-tools' protoc generates at start-up into a temp directory.

    shop_peer.py server         serves it on 127.0.0.1, port chosen by the OS; prints
                                `LISTENING <port>`; ends on SIGTERM/SIGINT or when its
                                parent goes away
    shop_peer.py client PORT    calls every RPC of it on 127.0.0.1:PORT through grpcio's
                                generated stub; prints `PASSED <rpc>` per call, exit 1 on
                                the first failure

Both sides compare every message with their own copy of the samples, built field by field
as Tests/FreshPackage/Sources/ShopApp/Samples.swift builds them: the server fails a call whose
request differs with INVALID_ARGUMENT naming both values; the client fails on a response that
differs. Exit status 2: the peer cannot start (grpcio-tools missing, protoc fails).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import threading
from concurrent import futures
from pathlib import Path

import peer_common

PROTOS = Path(__file__).resolve().parent.parent / "FreshPackage" / "Protos"
SOURCES = ("acme/catalog/v1/catalog.proto", "acme/shop/v1/order.proto")
TIMEOUT = 30  # seconds, for each call of the client


def generate(into: Path):
    """Generates the messages and stubs with grpcio-tools and imports them."""
    peer_common.grpcio_stubs([PROTOS], list(SOURCES), into)
    catalog = importlib.import_module("acme.catalog.v1.catalog_pb2")
    order = importlib.import_module("acme.shop.v1.order_pb2")
    stubs = importlib.import_module("acme.shop.v1.order_pb2_grpc")
    return catalog, order, stubs


class Samples:
    """The messages of every call, as Samples.swift builds them."""

    def __init__(self, catalog, order):
        self.c = catalog
        self.o = order
        self.query = order.OrderQuery(customer="ada", limit=3)
        self.place_request, self.place_response = 1, 2
        self.listed = range(10, 13)
        self.uploaded = range(20, 23)
        self.tracked = range(30, 33)
        self.track_answer_offset = 10

    def item(self, n: int):
        c = self.c
        item = c.Item(
            sku=f"SKU-{n}",
            title=f"Item {n} — ünïcødé ✓",
            category=c.CATEGORY_BOOK if n % 2 == 0 else c.CATEGORY_TOOL,
            price_cents=1_000_000_000_000 + n,
            tags=[f"t{n}", "", "tag with space"],
            thumbnail=bytes([0, 255, n % 256, 0x80, 10]),
            stock_by_store={"berlin": n, "paris": -n - 1, "": 7},
            dimensions=c.Item.Dimensions(width=1.5 * n, height=-0.25, weight=3.25),
        )
        item.added.seconds = 1_700_000_000 + n
        item.added.nanos = 123_456_789
        return item

    def line(self, n: int):
        return self.o.Order.Line(
            item=self.item(n),
            quantity=4_000_000_000 + n,
            adjustments=[-1, 0, n, -(2**31), 2**31 - 1],
        )

    def order(self, n: int):
        o, c = self.o, self.c
        order = o.Order(
            id=f"order-{n}",
            status=o.Order.STATUS_OPEN if n % 2 == 0 else o.Order.STATUS_SHIPPED,
            lines=[self.line(n), self.line(n + 1)],
            express=n % 2 == 1,
            zone=-n - 5,
            weight_grams=2**64 - 1 - n,
            balance=-n * 1000,
            # 7 is no value of the enum: proto3 enums are open, it is kept as 7.
            categories=[c.CATEGORY_BOOK, c.CATEGORY_TOOL, c.CATEGORY_UNSPECIFIED, 7],
        )
        order.gifts[f"g{n}"].CopyFrom(self.line(n + 2))
        order.gifts["empty"].SetInParent()
        if n % 3 == 0:
            order.card_token = f"tok-{n}"
        elif n % 3 == 1:
            order.voucher = bytes([n % 256, 0, 1, 2])
        else:
            order.account = 0xFFFF_FFFF_FFFF_FF00 + n
        order.delivery_window.seconds = n * 60
        order.delivery_window.nanos = 500_000_000
        # Present but empty, and absent: a wrapper keeps the difference.
        order.note.value = f"note {n}" if n % 2 == 0 else ""
        if n % 2 == 1:
            order.priority.value = -n
        order.gift_wrap.value = False
        order.placed.seconds = 1_600_000_000 + n
        return order

    def summary(self, orders):
        return self.o.OrderSummary(
            count=len(orders),
            total_cents=sum(line.item.price_cents for order in orders for line in order.lines),
            ids=[order.id for order in orders],
        )


class Mismatch(Exception):
    pass


def check(what: str, received, expected) -> None:
    if received != expected:
        raise Mismatch(f"{what}: received {received!r}, expected {expected!r}")


def serve(order_pb2, stubs, samples: Samples) -> None:
    import grpc

    class Service(stubs.OrderServiceServicer):
        def _checked(self, context, what, received, expected):
            try:
                check(what, received, expected)
            except Mismatch as error:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))

        def PlaceOrder(self, request, context):
            self._checked(context, "PlaceOrder request", request, samples.order(samples.place_request))
            return samples.order(samples.place_response)

        def ListOrders(self, request, context):
            self._checked(context, "ListOrders request", request, samples.query)
            for n in samples.listed:
                yield samples.order(n)

        def UploadOrders(self, request_iterator, context):
            received = list(request_iterator)
            self._checked(
                context, "UploadOrders requests", received, [samples.order(n) for n in samples.uploaded]
            )
            return samples.summary(received)

        def TrackOrders(self, request_iterator, context):
            expected = iter(samples.tracked)
            for request in request_iterator:
                n = next(expected, None)
                if n is None:
                    context.abort(grpc.StatusCode.INVALID_ARGUMENT, "TrackOrders: more requests than sent")
                self._checked(context, f"TrackOrders request {n}", request, samples.order(n))
                yield samples.order(n + samples.track_answer_offset)
            if next(expected, None) is not None:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "TrackOrders: fewer requests than sent")

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    stubs.add_OrderServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    peer_common.serve_grpc_threads(server, port)


def call(port: int, stubs, samples: Samples) -> None:
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
        stub = stubs.OrderServiceStub(channel)

        placed = stub.PlaceOrder(samples.order(samples.place_request), timeout=TIMEOUT)
        check("PlaceOrder response", placed, samples.order(samples.place_response))
        print("PASSED PlaceOrder", flush=True)

        listed = list(stub.ListOrders(samples.query, timeout=TIMEOUT))
        check("ListOrders responses", listed, [samples.order(n) for n in samples.listed])
        print("PASSED ListOrders", flush=True)

        uploaded = [samples.order(n) for n in samples.uploaded]
        summary = stub.UploadOrders(iter(uploaded), timeout=TIMEOUT)
        check("UploadOrders response", summary, samples.summary(uploaded))
        print("PASSED UploadOrders", flush=True)

        # Ping-pong: the next request goes only after the answer to the last one arrived.
        answered = threading.Semaphore(0)

        def requests():
            for n in samples.tracked:
                yield samples.order(n)
                if not answered.acquire(timeout=TIMEOUT):
                    return

        answers = []
        for answer in stub.TrackOrders(requests(), timeout=TIMEOUT):
            answers.append(answer)
            answered.release()
        check(
            "TrackOrders responses",
            answers,
            [samples.order(n + samples.track_answer_offset) for n in samples.tracked],
        )
        print("PASSED TrackOrders", flush=True)


def main() -> None:
    peer_common.unblock_signals()
    if len(sys.argv) < 2 or sys.argv[1] not in ("server", "client"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with tempfile.TemporaryDirectory(prefix="shop_peer.") as tmp:
        catalog, order, stubs = generate(Path(tmp))
        samples = Samples(catalog, order)
        if sys.argv[1] == "server":
            serve(order, stubs, samples)
            return
        try:
            call(int(sys.argv[2]), stubs, samples)
        except Exception as error:  # an RPC error or a Mismatch: the test reads this line
            print(f"FAILED: {error}", flush=True)
            sys.exit(1)


if __name__ == "__main__":
    main()
