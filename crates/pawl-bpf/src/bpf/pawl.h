/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * What pawl's HID-BPF program shares with user space: the ringbuf record, the settings
 * map's value, the per-device layout (read-only data set by the loader before load) and the
 * stats counters. Each has a #[repr(C)] Rust twin in crates/pawl-bpf/src/maps.rs whose
 * layout a test asserts against this header (compiled natively). The includer provides
 * __u8 .. __s64.
 */
#ifndef PAWL_H
#define PAWL_H

#include "scroll.h"

/* HID++ report ids (Logitech HID++ 2.0 spec): short 7 bytes, long 20 bytes. */
#define PAWL_HIDPP_SHORT 0x10
#define PAWL_HIDPP_LONG 0x11
/* HID++ 1.0 "device connection" notification sub id (the receiver's, forwarded by
 * hid-logitech-dj to the child device). */
#define PAWL_HIDPP10_CONNECTION 0x41

/* pawl_ring_record.kind */
#define PAWL_RING_DIVERTED_BUTTONS 0 /* 0x1B04 event 0: payload = up to 4 CIDs, big-endian */
#define PAWL_RING_RAW_XY 1           /* 0x1B04 event 1: payload = dx, dy s16 big-endian */
#define PAWL_RING_CONNECTION 2       /* HID++ 1.0 0x41: payload = the report's bytes 3.. */
#define PAWL_RING_WIRELESS_STATUS 3  /* 0x1D4B event 0: payload = its parameters */
#define PAWL_RING_WHEEL_TRACE 4      /* PAWL_FLAG_TRACE only: one per transformed axis
				      * step or glide tick; report_id 0 wheel / 1 pan step,
				      * 2 wheel / 3 pan glide tick; params = now_us u64, in
				      * units s32 (0 for a tick), out units s32 (native
				      * endian) */

/* One ringbuf record, 32 bytes: a HID++ notification as the device sent it. The report
 * (bytes 0..3) and up to 16 parameter bytes; user space decodes (pawl-hidpp). */
struct pawl_ring_record {
	__u64 time_ns;      /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u8 kind;          /* PAWL_RING_* */
	__u8 report_id;     /* PAWL_HIDPP_SHORT / _LONG */
	__u8 device_index;  /* HID++ device index (0xff: Bluetooth direct, 1..6: receiver) */
	__u8 feature_index; /* the feature index, or the HID++ 1.0 sub id */
	__u8 function;      /* function << 4 | software id (0: a notification) */
	__u8 len;           /* valid bytes in params: 3 (short) or 16 (long) */
	__u8 pad[2];
	__u8 params[16];
};

/* pawl_settings.flags */
#define PAWL_FLAG_WHEEL 1 /* transform the wheel and the pan (else pass them untouched) */
#define PAWL_FLAG_TRACE 2 /* tests only: a PAWL_RING_WHEEL_TRACE record per axis step */

/* The settings map's one value, 56 bytes: written by the loader (engine defaults) and by the
 * seat user's pawl (config load, SIGHUP, HID++ setup). */
struct pawl_settings {
	struct pawl_scroll_params scroll; /* quantum_v120 is not read: each axis runs with its
					   * unit as quantum (pawl_scroll_with_quantum) */
	__u8 reprog_index;          /* HID++ feature index of 0x1B04 on this device; 0 = none */
	__u8 wireless_status_index; /* of 0x1D4B; 0 = none */
	__u8 flags;                 /* PAWL_FLAG_* */
	__u8 pad[5];
};

/* A report field: bit offset from the start of the report buffer (the report id byte, when
 * the device numbers its reports, included) and size in bits; bits 0 = absent. */
struct pawl_field {
	__u16 bit;
	__u8 bits;
	__u8 is_signed;
};

/* The device's mouse report, found by the loader in its report descriptor; read-only data
 * of the program (set before load). 28 bytes. */
struct pawl_layout {
	__u8 report_id;      /* the mouse report's id; 0 = the device numbers no reports */
	__u8 hidpp;          /* 1: HID++ reports (0x10 / 0x11) are this device's */
	__u8 unit_v120;      /* v120 per wheel unit as the driver scales it: 8 hi-res, 120 */
	__u8 pan_unit_v120;  /* v120 per AC Pan unit (120: no driver scales the pan) */
	struct pawl_field wheel; /* Generic Desktop Wheel */
	struct pawl_field pan;   /* Consumer AC Pan */
	struct pawl_field x, y;  /* Generic Desktop X, Y */
	struct pawl_field buttons; /* Button page, first to last */
};

/* The stats map's keys (values u64). */
enum pawl_stat {
	PAWL_STAT_REPORTS,     /* input reports seen */
	PAWL_STAT_MOUSE,       /* mouse reports (the layout's report id) */
	PAWL_STAT_WHEEL,       /* wheel or pan frames transformed */
	PAWL_STAT_HIDPP,       /* HID++ reports seen */
	PAWL_STAT_RING,        /* ringbuf records submitted */
	PAWL_STAT_RING_FULL,   /* records lost: the ring was full */
	PAWL_STAT_DROPPED,     /* reports dropped (gesture notifications) */
	PAWL_STAT_SATURATED,   /* outputs clamped to the report field's range */
	PAWL_STAT_GLIDE_TICKS, /* glide ticks run (per axis; each one a step of the tail) */
	PAWL_STAT_INJECTED,    /* tail reports injected (hid_bpf_input_report returned >= 0) */
	PAWL_STAT_INJECT_FAILED, /* tail steps lost: the timer not armed, the device gone,
				  * or the injection refused */
	PAWL_STAT_COUNT,
};

#endif /* PAWL_H */
