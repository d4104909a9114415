/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The BPF program's shared headers compiled natively, for the tests: the scroll pipeline
 * (scroll.h) that tests/c_pipeline.rs runs against the engine, and the sizes and offsets of
 * the structs user space shares with the program (pawl.h), which maps.rs's tests compare with
 * their Rust twins. Nothing but exported wrappers. */
#include <linux/types.h>
#include <stddef.h>

#include "pawl.h"

__s32 pawl_scroll_step_native(struct pawl_scroll_axis *a, const struct pawl_scroll_params *p,
			      int invert, __s32 v, __u64 now, __s32 *detents)
{
	return pawl_scroll_step(a, p, invert, v, now, detents);
}

__s32 pawl_scroll_tick_native(struct pawl_scroll_axis *a, const struct pawl_scroll_params *p,
			      __u64 now, __s32 *detents)
{
	return pawl_scroll_tick(a, p, now, detents);
}

void pawl_scroll_with_quantum_native(struct pawl_scroll_params *p, __u32 q)
{
	pawl_scroll_with_quantum(p, q);
}

/* Sizes and offsets, in this order; returns how many it wrote (at most `n`). */
unsigned pawl_layout_native(unsigned long *out, unsigned n)
{
	const unsigned long v[] = {
		sizeof(struct pawl_scroll_params),
		offsetof(struct pawl_scroll_params, quantum_v120),
		offsetof(struct pawl_scroll_params, gesture_gap_us),
		offsetof(struct pawl_scroll_params, carry_limit_q16),
		offsetof(struct pawl_scroll_params, invert_vertical),
		offsetof(struct pawl_scroll_params, inertia),
		offsetof(struct pawl_scroll_params, glide_decay_q16),
		offsetof(struct pawl_scroll_params, glide_interval_us),
		sizeof(struct pawl_scroll_axis),
		offsetof(struct pawl_scroll_axis, bank),
		offsetof(struct pawl_scroll_axis, lores),
		offsetof(struct pawl_scroll_axis, out_sign),
		offsetof(struct pawl_scroll_axis, has_deadline),
		offsetof(struct pawl_scroll_axis, speed),
		offsetof(struct pawl_scroll_axis, glide),
		offsetof(struct pawl_scroll_axis, deadline),
		sizeof(struct pawl_ring_record),
		offsetof(struct pawl_ring_record, kind),
		offsetof(struct pawl_ring_record, function),
		offsetof(struct pawl_ring_record, len),
		offsetof(struct pawl_ring_record, params),
		sizeof(struct pawl_settings),
		offsetof(struct pawl_settings, reprog_index),
		offsetof(struct pawl_settings, wireless_status_index),
		offsetof(struct pawl_settings, flags),
		sizeof(struct pawl_layout),
		offsetof(struct pawl_layout, unit_v120),
		offsetof(struct pawl_layout, wheel),
		offsetof(struct pawl_layout, pan),
		offsetof(struct pawl_layout, buttons),
		sizeof(struct pawl_field),
		PAWL_STAT_COUNT,
	};
	unsigned i;

	for (i = 0; i < n && i < sizeof(v) / sizeof(v[0]); i++)
		out[i] = v[i];
	return i;
}
