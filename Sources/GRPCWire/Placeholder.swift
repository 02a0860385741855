internal import CNGHTTP2
