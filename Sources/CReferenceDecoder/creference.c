#include "creference.h"

static void scan_advertising_data(const uint8_t *ad, size_t length, int8_t rssi, struct creference_totals *totals) {
    size_t position = 0;
    while (position < length) {
        size_t structure = ad[position];
        if (structure == 0 || structure > length - position - 1) return;
        uint8_t type = ad[position + 1];
        const uint8_t *value = ad + position + 2;
        size_t value_length = structure - 1;
        if (type == 0xFF && value_length >= 25 && value[0] == 0x4C && value[1] == 0x00 &&
            value[2] == 0x02 && value[3] == 0x15) {
            uint16_t major = (uint16_t)(value[20] << 8 | value[21]);
            uint16_t minor = (uint16_t)(value[22] << 8 | value[23]);
            int8_t power = (int8_t)value[24];
            totals->ibeacons++;
            totals->checksum += (uint64_t)major + minor + (uint64_t)(int64_t)power + (uint64_t)(int64_t)rssi + value[4];
        } else if (type == 0x16 && value_length >= 3 && value[0] == 0xAA && value[1] == 0xFE) {
            totals->eddystone++;
        }
        position += structure + 1;
    }
}

int creference_decode(const uint8_t *buffer, size_t length, struct creference_totals *totals) {
    size_t position = 0;
    while (position + 3 <= length) {
        if (buffer[position] != 0x04 || buffer[position + 1] != 0x3E) return -1;
        size_t parameters = buffer[position + 2];
        size_t start = position + 3, end = start + parameters;
        if (end > length || parameters < 2 || buffer[start] != 0x02) return -1;
        size_t count = buffer[start + 1];
        size_t cursor = start + 2;
        for (size_t report = 0; report < count; report++) {
            if (cursor + 10 > end) return -1;
            size_t data_length = buffer[cursor + 8];
            if (cursor + 10 + data_length > end) return -1;
            int8_t rssi = (int8_t)buffer[cursor + 9 + data_length];
            totals->reports++;
            scan_advertising_data(buffer + cursor + 9, data_length, rssi, totals);
            cursor += 10 + data_length;
        }
        position = end;
    }
    return position == length ? 0 : -1;
}
