#ifndef CHCISHIM_H
#define CHCISHIM_H

/* Small C helpers for what Swift cannot spell comfortably on Linux: Bluetooth HCI sockets
 * (struct sockaddr_hci, struct hci_filter) and termios baud-rate constants. Each returns 0 or a
 * positive value on success and -errno on failure, so Swift never reads a stale errno. */

/* The channel an HCI socket got bound to. */
enum chci_channel {
    CHCI_CHANNEL_RAW = 0,  /* shared with the kernel's own Bluetooth stack */
    CHCI_CHANNEL_USER = 1, /* exclusive: the kernel stack stays out of the way */
};

/* Opens AF_BLUETOOTH/BTPROTO_HCI and binds it to device `dev_id` (hciN). Tries the user channel
 * first; when the kernel refuses it (device up, not permitted, unsupported), falls back to the
 * raw channel with a filter that passes every event. Stores the channel in *channel.
 * Returns the socket or -errno; -EAFNOSUPPORT means the kernel has no Bluetooth sockets. */
int chci_open_hci_socket(int dev_id, int *channel);

/* Puts a serial device in raw mode (no echo, no line discipline, 8N1) at `baud`, with RTS/CTS
 * flow control when `flow_control` is nonzero. Returns 0 or -errno; -EINVAL for a baud rate
 * termios cannot express. */
int chci_configure_serial(int fd, int baud, int flow_control);

#endif
