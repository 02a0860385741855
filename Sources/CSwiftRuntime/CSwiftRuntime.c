#include "CSwiftRuntime.h"

#include <stddef.h>

// Exported by libswiftCore (include/swift/Runtime/HeapObject.h in the Swift repository):
// the object retained, or NULL when it is already being deinitialized.
extern void *swift_tryRetain(void *object);

bool fleet_swift_try_retain(void *object) { return swift_tryRetain(object) != NULL; }
