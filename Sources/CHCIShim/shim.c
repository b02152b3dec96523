#define _GNU_SOURCE
#include "chcishim.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

/* From the kernel's include/net/bluetooth/hci_sock.h and bluetooth.h; userspace headers are
 * not installed on every machine, and these values are kernel ABI. */
#define CHCI_AF_BLUETOOTH 31
#define CHCI_BTPROTO_HCI 1
#define CHCI_SOL_HCI 0
#define CHCI_HCI_FILTER 2

struct chci_sockaddr_hci {
    unsigned short hci_family;
    unsigned short hci_dev;
    unsigned short hci_channel;
};

struct chci_hci_filter {
    unsigned int type_mask;
    unsigned int event_mask[2];
    unsigned short opcode;
};

static int bind_channel(int fd, int dev_id, unsigned short channel) {
    struct chci_sockaddr_hci address;
    memset(&address, 0, sizeof address);
    address.hci_family = CHCI_AF_BLUETOOTH;
    address.hci_dev = (unsigned short)dev_id;
    address.hci_channel = channel;
    return bind(fd, (struct sockaddr *)&address, sizeof address) < 0 ? -errno : 0;
}

int chci_open_hci_socket(int dev_id, int *channel) {
    int fd = socket(CHCI_AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, CHCI_BTPROTO_HCI);
    if (fd < 0) return -errno;
    if (bind_channel(fd, dev_id, CHCI_CHANNEL_USER) == 0) {
        *channel = CHCI_CHANNEL_USER;
        return fd;
    }
    /* A bound-failed socket cannot be rebound portably; start again for the raw channel. */
    close(fd);
    fd = socket(CHCI_AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, CHCI_BTPROTO_HCI);
    if (fd < 0) return -errno;
    int result = bind_channel(fd, dev_id, CHCI_CHANNEL_RAW);
    if (result < 0) {
        close(fd);
        return result;
    }
    struct chci_hci_filter filter;
    memset(&filter, 0, sizeof filter);
    filter.type_mask = 1u << 0x04; /* events only: this host never uses ACL on the raw channel */
    filter.event_mask[0] = 0xFFFFFFFFu;
    filter.event_mask[1] = 0xFFFFFFFFu;
    if (setsockopt(fd, CHCI_SOL_HCI, CHCI_HCI_FILTER, &filter, sizeof filter) < 0) {
        result = -errno;
        close(fd);
        return result;
    }
    *channel = CHCI_CHANNEL_RAW;
    return fd;
}

static speed_t baud_constant(int baud) {
    switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 500000: return B500000;
    case 576000: return B576000;
    case 921600: return B921600;
    case 1000000: return B1000000;
    case 1152000: return B1152000;
    case 1500000: return B1500000;
    case 2000000: return B2000000;
    case 3000000: return B3000000;
    case 4000000: return B4000000;
    default: return 0;
    }
}

int chci_configure_serial(int fd, int baud, int flow_control) {
    speed_t speed = baud_constant(baud);
    if (speed == 0) return -EINVAL;
    struct termios options;
    if (tcgetattr(fd, &options) < 0) return -errno;
    cfmakeraw(&options);
    options.c_cflag |= CLOCAL | CREAD;
    options.c_cflag &= ~(CSTOPB | PARENB);
    if (flow_control) options.c_cflag |= CRTSCTS;
    else options.c_cflag &= ~CRTSCTS;
    options.c_cc[VMIN] = 1;
    options.c_cc[VTIME] = 0;
    if (cfsetispeed(&options, speed) < 0 || cfsetospeed(&options, speed) < 0) return -errno;
    if (tcsetattr(fd, TCSANOW, &options) < 0) return -errno;
    tcflush(fd, TCIOFLUSH);
    return 0;
}
