#ifndef C_SWIFT_RUNTIME_H
#define C_SWIFT_RUNTIME_H
// The one Swift runtime entry point FleetSync needs that Swift code may not name itself.
#include <stdbool.h>

/// Retains the Swift object `object` and returns true, unless its deinitialization has begun
/// (then it returns false and changes nothing): the runtime's swift_tryRetain, which loading
/// a weak reference uses.
bool fleet_swift_try_retain(void *object);

#endif
