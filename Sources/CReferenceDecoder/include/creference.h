#ifndef CREFERENCE_H
#define CREFERENCE_H
#include <stddef.h>
#include <stdint.h>

/// What the reference loop found; the Swift benchmark checks it finds the same.
struct creference_totals {
    uint64_t reports;
    uint64_t ibeacons;
    uint64_t eddystone;
    uint64_t checksum;
};

/// Walks a stream of H4 HCI events (04 3E len 02 n reports...) doing only the checks needed
/// not to read out of bounds, and adds up iBeacon fields and Eddystone frames. It is the speed
/// limit the Swift decoder is compared against. Returns 0, or -1 at the first malformed event.
int creference_decode(const uint8_t *buffer, size_t length, struct creference_totals *totals);

#endif
