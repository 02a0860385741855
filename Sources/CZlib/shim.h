// zlib from zlib1g-dev: gzip message compression for GRPCWire.
#include <zlib.h>
