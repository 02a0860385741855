// protobuf-c 1.4 runtime from libprotobuf-c-dev.
//
// Deprecated proto fields are still on the wire, and our generated Swift must copy them;
// protobuf-c's deprecation attribute would warn on every such copy, so it is turned off here
// (our Swift properties carry the proto's deprecation note in their documentation instead).
#define PROTOBUF_C__NO_DEPRECATED 1
#include <protobuf-c/protobuf-c.h>
