#ifndef C_ALLOCATION_COUNTER_H
#define C_ALLOCATION_COUNTER_H
#include <stdint.h>

/// How many times malloc, calloc, realloc, posix_memalign, aligned_alloc and memalign have
/// been called in this process since it started. Linked only into fleet-codec-bench, which
/// it interposes on glibc's allocator to count the allocations each operation makes.
uint64_t fleet_allocation_count(void);

#endif
