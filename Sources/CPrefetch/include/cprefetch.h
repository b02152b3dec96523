#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Asks the CPU to bring the cache line holding `address` closer, without waiting for it and
/// without faulting: Swift has no prefetch of its own, and the engine's batch path needs one to
/// overlap the memory latency of one sighting's lookups with the work of the sightings before it.
static inline void proxima_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
