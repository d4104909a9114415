/*
 * The baseline of `cargo xtask perf-vm`: the least a grabbing mouse forwarder can do.
 *
 *   forwarder /dev/input/eventN
 *
 * Grabs the device (EVIOCGRAB), creates a uinput device named "perf C forwarder" with the
 * source's event types and codes (EV_KEY, EV_REL, EV_MSC bits copied), then loops: one
 * blocking read() of everything available, one write() per frame (the frame's events and
 * its SYN_REPORT together). No epoll, no timers, no threads, no allocation. SIGTERM and
 * SIGINT end it (the kernel releases the grab and destroys the uinput device on exit).
 *
 * Built by xtask with `gcc -O2 -static`. Not part of pawl: a yardstick for PERFORMANCE.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NAME "perf C forwarder"

static int copy_bits(int src, int dst, int type, unsigned long set_req, int max) {
    unsigned char bits[KEY_MAX / 8 + 1];
    memset(bits, 0, sizeof bits);
    if (ioctl(src, EVIOCGBIT(type, sizeof bits), bits) < 0) return -1;
    int any = 0;
    for (int code = 0; code <= max; code++) {
        if (bits[code / 8] & (1 << (code % 8))) {
            if (!any && ioctl(dst, UI_SET_EVBIT, type) < 0) return -1;
            any = 1;
            if (ioctl(dst, set_req, code) < 0) return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s /dev/input/eventN\n", argv[0]);
        return 2;
    }
    int src = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (src < 0) {
        perror(argv[1]);
        return 1;
    }
    if (ioctl(src, EVIOCGRAB, 1) < 0) {
        perror("EVIOCGRAB");
        return 1;
    }
    int dst = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (dst < 0) {
        perror("/dev/uinput");
        return 1;
    }
    if (copy_bits(src, dst, EV_KEY, UI_SET_KEYBIT, KEY_MAX) < 0 ||
        copy_bits(src, dst, EV_REL, UI_SET_RELBIT, REL_MAX) < 0 ||
        copy_bits(src, dst, EV_MSC, UI_SET_MSCBIT, MSC_MAX) < 0) {
        perror("copy capabilities");
        return 1;
    }
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_VIRTUAL;
    setup.id.vendor = 0x0001;
    setup.id.product = 0x0001;
    strncpy(setup.name, NAME, sizeof setup.name - 1);
    if (ioctl(dst, UI_DEV_SETUP, &setup) < 0 || ioctl(dst, UI_DEV_CREATE) < 0) {
        perror("uinput create");
        return 1;
    }
    fprintf(stderr, "forwarding %s to \"%s\"\n", argv[1], NAME);

    struct input_event buf[256];
    for (;;) {
        ssize_t n = read(src, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("read");
            return 1;
        }
        size_t count = (size_t)n / sizeof buf[0];
        size_t start = 0;
        for (size_t i = 0; i < count; i++) {
            if (buf[i].type == EV_SYN && buf[i].code == SYN_REPORT) {
                size_t len = (i + 1 - start) * sizeof buf[0];
                if (write(dst, &buf[start], len) != (ssize_t)len) {
                    perror("write");
                    return 1;
                }
                start = i + 1;
            }
        }
        /* A frame split across reads (never seen with mice: the kernel hands out whole
         * packets) is forwarded as is. */
        if (start < count) {
            size_t len = (count - start) * sizeof buf[0];
            if (write(dst, &buf[start], len) != (ssize_t)len) {
                perror("write");
                return 1;
            }
        }
    }
}
