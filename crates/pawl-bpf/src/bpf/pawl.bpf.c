// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * pawl's HID-BPF program (struct_ops hid_bpf_ops, kernel >= 6.11), one instance per handled
 * HID device, loaded and attached by pawl-kernel-attach:
 *  - the mouse report's wheel and AC Pan run through the engine's scroll pipeline
 *    (scroll.h) in place, so what hid-logitech-hidpp (or hid-generic) then makes of them
 *    is what pawl would emit; the pipeline's state lives in the `state` map;
 *  - HID++ 0x1B04 diverted-button and raw-XY notifications on the reprog-controls feature
 *    index are copied to the `ring` ringbuf and dropped;
 *  - HID++ connection notifications (1.0 0x41, 0x1D4B event 0) are copied and passed on;
 *  - everything else passes untouched (replies reach the driver and pawl).
 * Licence: GPL-2.0-only OR MIT ("Dual MIT/GPL" to the kernel): the HID-BPF kfuncs and the
 * ringbuf helpers are for GPL-compatible programs only.
 */
#include "hid_bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "pawl.h"

char _license[] SEC("license") = "Dual MIT/GPL";

/* Bytes of the report the program reads: every field must lie within (the loader checks).
 * HID++ long reports are 20 bytes. */
#define PAWL_DATA_BYTES 32

/* Set by the loader before load (frozen: the verifier sees constants). */
const volatile struct pawl_layout layout = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pawl_settings);
} settings SEC(".maps");

struct pawl_state {
	struct pawl_scroll_axis wheel;
	struct pawl_scroll_axis pan;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pawl_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PAWL_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16384); /* 512 records */
} ring SEC(".maps");

static __always_inline void bump(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &k);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* The field `f` of the report `d` (f->bits 1..16, within PAWL_DATA_BYTES: the loader's
 * check; the bound below is the verifier's). Reads 4 bytes little-endian. */
static __always_inline int field_get(const __u8 *d, const volatile struct pawl_field *f,
				     __s32 *out)
{
	__u32 byte = f->bit >> 3, shift = f->bit & 7, bits = f->bits, raw, mask, v;

	if (bits == 0 || bits > 16 || byte > PAWL_DATA_BYTES - 4)
		return 0;
	raw = (__u32)d[byte] | (__u32)d[byte + 1] << 8 | (__u32)d[byte + 2] << 16 |
	      (__u32)d[byte + 3] << 24;
	mask = (1U << bits) - 1;
	v = (raw >> shift) & mask;
	if (f->is_signed && (v & (1U << (bits - 1))))
		*out = (__s32)(v | ~mask);
	else
		*out = (__s32)v;
	return 1;
}

/* Writes `v`, clamped to the field's range (counted), back into the report. */
static __always_inline void field_set(__u8 *d, const volatile struct pawl_field *f, __s32 v)
{
	__u32 byte = f->bit >> 3, shift = f->bit & 7, bits = f->bits, raw, mask;
	__s32 lo, hi;

	if (bits == 0 || bits > 16 || byte > PAWL_DATA_BYTES - 4)
		return;
	mask = (1U << bits) - 1;
	if (f->is_signed) {
		hi = (__s32)(mask >> 1);
		lo = -hi - 1;
	} else {
		lo = 0;
		hi = (__s32)mask;
	}
	if (v > hi || v < lo) {
		v = v > hi ? hi : lo;
		bump(PAWL_STAT_SATURATED);
	}
	raw = (__u32)d[byte] | (__u32)d[byte + 1] << 8 | (__u32)d[byte + 2] << 16 |
	      (__u32)d[byte + 3] << 24;
	raw = (raw & ~(mask << shift)) | (((__u32)v & mask) << shift);
	d[byte] = (__u8)raw;
	d[byte + 1] = (__u8)(raw >> 8);
	d[byte + 2] = (__u8)(raw >> 16);
	d[byte + 3] = (__u8)(raw >> 24);
}

/* PAWL_FLAG_TRACE: what one axis step saw and made, for the VM's equality test. */
static __always_inline void trace(__u8 which, __u64 now_us, __s32 in, __s32 out)
{
	struct pawl_ring_record *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);

	if (!r) {
		bump(PAWL_STAT_RING_FULL);
		return;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time_ns = now_us * 1000;
	r->kind = PAWL_RING_WHEEL_TRACE;
	r->report_id = which;
	r->len = 16;
	__builtin_memcpy(r->params, &now_us, 8);
	__builtin_memcpy(r->params + 8, &in, 4);
	__builtin_memcpy(r->params + 12, &out, 4);
	bpf_ringbuf_submit(r, 0);
	bump(PAWL_STAT_RING);
}

/* One axis: device units in, device units out (the pipeline in v120, quantum = unit). */
static __always_inline int axis(__u8 *d, const volatile struct pawl_field *f, __u32 unit,
				struct pawl_scroll_axis *a, const struct pawl_scroll_params *settings,
				int invert, __u64 now_us, __u8 which, int tracing)
{
	struct pawl_scroll_params p = *settings;
	__s32 units, out, detents;
	__u32 mag;

	if (!field_get(d, f, &units) || units == 0 || unit == 0 || unit > 120)
		return 0;
	pawl_scroll_with_quantum(&p, unit);
	out = pawl_scroll_step(a, &p, invert, units * (__s32)unit, now_us, &detents);
	/* out is a multiple of the quantum = unit. */
	mag = out < 0 ? (__u32)0 - (__u32)out : (__u32)out;
	mag /= unit;
	field_set(d, f, out < 0 ? -(__s32)mag : (__s32)mag);
	if (tracing)
		trace(which, now_us, units, out < 0 ? -(__s32)mag : (__s32)mag);
	return 1;
}

static __always_inline void mouse(__u8 *d)
{
	__u32 zero = 0;
	struct pawl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	struct pawl_state *st = bpf_map_lookup_elem(&state, &zero);
	__u64 now_us;
	int n, tracing;

	bump(PAWL_STAT_MOUSE);
	if (!s || !st || !(s->flags & PAWL_FLAG_WHEEL))
		return;
	now_us = bpf_ktime_get_ns() / 1000;
	tracing = s->flags & PAWL_FLAG_TRACE;
	n = axis(d, &layout.wheel, layout.unit_v120, &st->wheel, &s->scroll,
		 s->scroll.invert_vertical, now_us, 0, tracing);
	n += axis(d, &layout.pan, layout.pan_unit_v120, &st->pan, &s->scroll,
		  s->scroll.invert_horizontal, now_us, 1, tracing);
	if (n)
		bump(PAWL_STAT_WHEEL);
}

static __always_inline void ring_copy(const __u8 *d, __u8 kind)
{
	struct pawl_ring_record *r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	int i;

	if (!r) {
		bump(PAWL_STAT_RING_FULL);
		return;
	}
	r->time_ns = bpf_ktime_get_ns();
	r->kind = kind;
	r->report_id = d[0];
	r->device_index = d[1];
	r->feature_index = d[2];
	r->function = d[3];
	r->len = d[0] == PAWL_HIDPP_LONG ? 16 : 3;
	r->pad[0] = r->pad[1] = 0;
#pragma unroll
	for (i = 0; i < 16; i++)
		r->params[i] = i < r->len ? d[4 + i] : 0;
	bpf_ringbuf_submit(r, 0);
	bump(PAWL_STAT_RING);
}

/* A HID++ report: returns what device_event returns (negative = dropped). */
static __always_inline int hidpp(const __u8 *d)
{
	__u32 zero = 0;
	struct pawl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	__u8 feature = d[2], ev = d[3] >> 4, swid = d[3] & 0x0f;

	bump(PAWL_STAT_HIDPP);
	if (d[0] == PAWL_HIDPP_SHORT && feature == PAWL_HIDPP10_CONNECTION) {
		ring_copy(d, PAWL_RING_CONNECTION);
		return 0;
	}
	if (!s || swid != 0 || feature == 0)
		return 0; /* a reply (software id set), or nothing to look for */
	if (feature == s->wireless_status_index && ev == 0) {
		ring_copy(d, PAWL_RING_WIRELESS_STATUS);
		return 0;
	}
	if (feature == s->reprog_index && ev <= 1 && d[0] == PAWL_HIDPP_LONG) {
		ring_copy(d, ev == 0 ? PAWL_RING_DIVERTED_BUTTONS : PAWL_RING_RAW_XY);
		bump(PAWL_STAT_DROPPED);
		return -1; /* the report stops here: hidraw and the driver never see it */
	}
	return 0;
}

SEC("struct_ops/hid_device_event")
int BPF_PROG(pawl_device_event, struct hid_bpf_ctx *hctx, enum hid_report_type type,
	     __u64 source)
{
	__u8 *d;

	if (type != HID_INPUT_REPORT)
		return 0;
	d = hid_bpf_get_data(hctx, 0, PAWL_DATA_BYTES);
	if (!d)
		return 0;
	bump(PAWL_STAT_REPORTS);
	if (layout.hidpp && (d[0] == PAWL_HIDPP_SHORT || d[0] == PAWL_HIDPP_LONG))
		return hidpp(d);
	if (layout.report_id == 0 || d[0] == layout.report_id)
		mouse(d);
	return 0;
}

SEC(".struct_ops.link")
struct hid_bpf_ops pawl_ops = {
	.hid_device_event = (void *)pawl_device_event,
};
