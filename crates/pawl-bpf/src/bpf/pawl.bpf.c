// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * pawl's HID-BPF program (struct_ops hid_bpf_ops, kernel >= 6.11), one instance per handled
 * HID device, loaded and attached by pawl-kernel-attach:
 *  - the mouse report's wheel and AC Pan run through the engine's scroll pipeline
 *    (scroll.h) in place, so what hid-logitech-hidpp (or hid-generic) then makes of them
 *    is what pawl would emit; the pipeline's state lives in the `state` map;
 *  - glide inertia's tail runs here too, never waking user space: a BPF timer (`glide`
 *    map) armed at the earliest axis deadline (absolute CLOCK_MONOTONIC) starts a bpf_wq
 *    (timers cannot sleep; injecting a report needs a sleepable context), whose callback
 *    injects the last mouse report with its relative fields zeroed (buttons kept) through
 *    hid_bpf_input_report. The kernel hands that report to this program again with
 *    `source` != 0 and the device's input lock held (so a tick never interleaves with a
 *    real report): the program runs the ticks due (pawl_scroll_tick), writes them into the
 *    report's wheel / pan, and re-arms the timer or lets it rest; hid-logitech-hidpp then
 *    scales the report like a real one. A wheel event re-arms or cancels the timer as the
 *    engine's step moves or clears the deadline;
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

/* The device's glide timer and work item (one for both axes: armed at the earlier axis
 * deadline) and the tail's report template. */
struct pawl_glide {
	struct bpf_timer timer;
	struct bpf_wq wq;
	__u32 hid_id;   /* hctx->hid->id, for hid_bpf_allocate_context */
	__u8 ready;     /* timer and wq initialised */
	__u8 injecting; /* the wq callback is injecting: a report with source != 0 is ours */
	__u8 pad[2];
	__u8 report[PAWL_DATA_BYTES]; /* the last mouse report, X, Y, wheel and pan zeroed */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pawl_glide);
} glide SEC(".maps");

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

/* PAWL_FLAG_TRACE: what one axis step (which 0 / 1) or glide tick (2 / 3) saw and made,
 * for the VM's equality tests. */
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

/* The glide's bounds as the config validates them (pawl-engine config/validate.rs:
 * glide_decay 0.05..=0.99, glide_interval_ms 4..=100): the settings map is the seat user's
 * to write, and a decay of 1.0 or more never ends a tail (injected reports forever), with
 * an interval of some 25 us tens of thousands a second, from a kernel worker. Values pawl
 * writes are within and stay as they are. */
#define PAWL_GLIDE_DECAY_MAX_Q16 64881 /* round(0.99 * 65536) */
#define PAWL_GLIDE_INTERVAL_MIN_US 4000
#define PAWL_GLIDE_INTERVAL_MAX_US 100000

static __always_inline void glide_bounds(struct pawl_scroll_params *p)
{
	if (p->glide_decay_q16 > PAWL_GLIDE_DECAY_MAX_Q16)
		p->glide_decay_q16 = PAWL_GLIDE_DECAY_MAX_Q16;
	if (p->glide_interval_us < PAWL_GLIDE_INTERVAL_MIN_US)
		p->glide_interval_us = PAWL_GLIDE_INTERVAL_MIN_US;
	if (p->glide_interval_us > PAWL_GLIDE_INTERVAL_MAX_US)
		p->glide_interval_us = PAWL_GLIDE_INTERVAL_MAX_US;
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
	glide_bounds(&p);
	out = pawl_scroll_step(a, &p, invert, units * (__s32)unit, now_us, &detents);
	/* out is a multiple of the quantum = unit. */
	mag = out < 0 ? (__u32)0 - (__u32)out : (__u32)out;
	mag /= unit;
	field_set(d, f, out < 0 ? -(__s32)mag : (__s32)mag);
	if (tracing)
		trace(which, now_us, units, out < 0 ? -(__s32)mag : (__s32)mag);
	return 1;
}

/* One axis's glide tick due at `now_us`, written into the report field `f` (device units);
 * returns 1 when a tick ran. */
static __always_inline int axis_tick(__u8 *d, const volatile struct pawl_field *f, __u32 unit,
				     struct pawl_scroll_axis *a,
				     const struct pawl_scroll_params *settings, __u64 now_us,
				     __u8 which, int tracing)
{
	struct pawl_scroll_params p = *settings;
	__s32 out, detents, units;
	__u32 mag;

	if (f->bits == 0 || unit == 0 || unit > 120 || settings->inertia != PAWL_INERTIA_GLIDE ||
	    !a->has_deadline || now_us < a->deadline)
		return 0;
	pawl_scroll_with_quantum(&p, unit);
	glide_bounds(&p);
	out = pawl_scroll_tick(a, &p, now_us, &detents);
	mag = out < 0 ? (__u32)0 - (__u32)out : (__u32)out;
	mag /= unit;
	units = out < 0 ? -(__s32)mag : (__s32)mag;
	field_set(d, f, units);
	bump(PAWL_STAT_GLIDE_TICKS);
	if (tracing)
		trace(which, now_us, 0, units);
	return 1;
}

/* The device's timer and wq, initialised on the first tail (bpf_timer_init needs the map
 * pinned or held by user space: the loader pins it). */
static int glide_timer_cb(void *map, int *key, void *value);
static int glide_wq_cb(void *map, int *key, void *value);

static __always_inline int glide_init(struct pawl_glide *g)
{
	if (g->ready)
		return 1;
	/* -EBUSY: another CPU initialised it first, also fine. */
	bpf_timer_init(&g->timer, &glide, CLOCK_MONOTONIC);
	bpf_wq_init(&g->wq, &glide, 0);
	if (bpf_ksym_exists(bpf_wq_set_callback)) {
		if (bpf_wq_set_callback(&g->wq, glide_wq_cb, 0))
			return 0;
	} else if (bpf_ksym_exists(bpf_wq_set_callback_impl)) {
		if (bpf_wq_set_callback_impl(&g->wq, glide_wq_cb, 0, NULL))
			return 0;
	} else {
		return 0;
	}
	g->ready = 1;
	return 1;
}

/* Arms the timer at the earlier axis deadline, or cancels it when no tick is due (or
 * inertia is not glide: then no deadline is ever acted on). */
static __always_inline void glide_arm(struct pawl_glide *g, const struct pawl_state *st,
				      const struct pawl_settings *s)
{
	__u64 next = ~0ULL;
	int due = 0;

	if (s->scroll.inertia == PAWL_INERTIA_GLIDE) {
		if (st->wheel.has_deadline) {
			next = st->wheel.deadline;
			due = 1;
		}
		if (st->pan.has_deadline && st->pan.deadline < next) {
			next = st->pan.deadline;
			due = 1;
		}
	}
	if (!due || next > ~0ULL / 1000) {
		if (g->ready)
			bpf_timer_cancel(&g->timer);
		return;
	}
	/* The callback on every arming: a cancel may have unset it (as the kernel's
	 * drivers/hid/bpf/progs/hid_bpf_async.h does). */
	if (!glide_init(g) || bpf_timer_set_callback(&g->timer, glide_timer_cb) ||
	    bpf_timer_start(&g->timer, next * 1000, BPF_F_TIMER_ABS))
		bump(PAWL_STAT_INJECT_FAILED);
}

/* The tail's template: this report with its relative fields zeroed (buttons kept, so an
 * injected tick never changes what is held). */
static __always_inline void glide_template(struct pawl_glide *g, const __u8 *d)
{
	__builtin_memcpy(g->report, d, PAWL_DATA_BYTES);
	field_set(g->report, &layout.x, 0);
	field_set(g->report, &layout.y, 0);
	field_set(g->report, &layout.wheel, 0);
	field_set(g->report, &layout.pan, 0);
}

static __always_inline void mouse(struct hid_bpf_ctx *hctx, __u8 *d)
{
	__u32 zero = 0;
	struct pawl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	struct pawl_state *st = bpf_map_lookup_elem(&state, &zero);
	struct pawl_glide *g = bpf_map_lookup_elem(&glide, &zero);
	__u64 now_us;
	int n, tracing;

	bump(PAWL_STAT_MOUSE);
	if (!s || !st || !g || !(s->flags & PAWL_FLAG_WHEEL))
		return;
	now_us = bpf_ktime_get_ns() / 1000;
	tracing = s->flags & PAWL_FLAG_TRACE;
	n = axis(d, &layout.wheel, layout.unit_v120, &st->wheel, &s->scroll,
		 s->scroll.invert_vertical, now_us, 0, tracing);
	n += axis(d, &layout.pan, layout.pan_unit_v120, &st->pan, &s->scroll,
		  s->scroll.invert_horizontal, now_us, 1, tracing);
	if (n)
		bump(PAWL_STAT_WHEEL);
	if (s->scroll.inertia != PAWL_INERTIA_GLIDE)
		return;
	if (st->wheel.has_deadline || st->pan.has_deadline) {
		g->hid_id = hctx->hid->id;
		glide_template(g, d);
	}
	if (n)
		glide_arm(g, st, s);
}

/* A report injected by a HID-BPF program (source != 0). Ours (the wq callback is
 * injecting): the glide ticks due now go into its wheel and pan, and the timer is re-armed.
 * Anyone else's: untouched. */
static __always_inline void injected(__u8 *d)
{
	__u32 zero = 0;
	struct pawl_settings *s = bpf_map_lookup_elem(&settings, &zero);
	struct pawl_state *st = bpf_map_lookup_elem(&state, &zero);
	struct pawl_glide *g = bpf_map_lookup_elem(&glide, &zero);
	__u64 now_us;
	int tracing;

	if (!s || !st || !g || !g->injecting || !(s->flags & PAWL_FLAG_WHEEL))
		return;
	if (layout.report_id != 0 && d[0] != layout.report_id)
		return;
	now_us = bpf_ktime_get_ns() / 1000;
	tracing = s->flags & PAWL_FLAG_TRACE;
	axis_tick(d, &layout.wheel, layout.unit_v120, &st->wheel, &s->scroll, now_us, 2, tracing);
	axis_tick(d, &layout.pan, layout.pan_unit_v120, &st->pan, &s->scroll, now_us, 3, tracing);
	glide_arm(g, st, s);
}

/* The timer fired (softirq: cannot sleep): hand over to the work item. */
static int glide_timer_cb(void *map, int *key, void *value)
{
	struct pawl_glide *g = value;

	bpf_wq_start(&g->wq, 0);
	return 0;
}

/* The work item (process context, may sleep): inject the template; the program's own
 * device_event runs the ticks on it (`injected`). */
static int glide_wq_cb(void *map, int *key, void *value)
{
	struct pawl_glide *g = value;
	struct hid_bpf_ctx *ctx;
	__u8 buf[PAWL_DATA_BYTES];
	int ret;

	ctx = hid_bpf_allocate_context(g->hid_id);
	if (!ctx) {
		bump(PAWL_STAT_INJECT_FAILED);
		return 0;
	}
	__builtin_memcpy(buf, g->report, PAWL_DATA_BYTES);
	g->injecting = 1;
	/* The kernel truncates the buffer to the report's length. */
	ret = hid_bpf_input_report(ctx, HID_INPUT_REPORT, buf, PAWL_DATA_BYTES);
	g->injecting = 0;
	hid_bpf_release_context(ctx);
	bump(ret < 0 ? PAWL_STAT_INJECT_FAILED : PAWL_STAT_INJECTED);
	return 0;
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
	if (source != 0) {
		injected(d); /* a report a HID-BPF program injected: never transformed again */
		return 0;
	}
	if (layout.hidpp && (d[0] == PAWL_HIDPP_SHORT || d[0] == PAWL_HIDPP_LONG))
		return hidpp(d);
	if (layout.report_id == 0 || d[0] == layout.report_id)
		mouse(hctx, d);
	return 0;
}

SEC(".struct_ops.link")
struct hid_bpf_ops pawl_ops = {
	.hid_device_event = (void *)pawl_device_event,
};
