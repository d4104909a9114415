/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pawl's scroll pipeline for one wheel axis, in C, for the HID-BPF program and for the
 * native equality test (tests/c_pipeline.rs). It follows, step by step, the fixed-point
 * specification in crates/pawl-engine/src/scroll.rs ("Fixed-point specification"): every
 * value here is the Rust value of the same name, and the output is bit-identical to
 * `ScrollAxis::step` (proven on every recording and by a property test).
 *
 * Scope: spike damping, EMA, burst max-step clamp, carry inertia, inversion, the output
 * quantum and the fractional carry, lo-res detents. NOT the glide: glide inertia runs in
 * user space in kernel mode (its speed estimate is the one division by a runtime value, and
 * its tail needs a timer); with inertia = glide this pipeline gives what the engine's `step`
 * gives (the glide only arms a deadline there), and the ticks are user space's.
 *
 * Verifier-friendly: no loops, no floats, no signed division (BPF before cpu v4 has none:
 * the two divisions here are unsigned, one by the constant 120, one by the quantum),
 * 64-bit integer arithmetic, every function always inlined.
 *
 * The includer provides __u8 .. __s64 (the kernel's fixed-width names): <linux/types.h>
 * natively, the program's own type header in BPF.
 */
#ifndef PAWL_SCROLL_H
#define PAWL_SCROLL_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* Fraction bits: values are Q16, 1/65536 v120 units (scroll.rs FRAC_BITS). */
#define PAWL_FRAC_BITS 16
#define PAWL_ONE (1LL << PAWL_FRAC_BITS)
#define PAWL_HALF (PAWL_ONE >> 1)
/* Input magnitudes saturate here (scroll.rs V120_LIMIT, 2^23). */
#define PAWL_V120_LIMIT (1U << 23)
/* Events within this many µs of a burst's first share one max step (scroll.rs BURST_US). */
#define PAWL_BURST_US 2000ULL
/* v120 units per detent (units.rs V120_PER_DETENT). */
#define PAWL_V120_PER_DETENT 120

/* ScrollParams::inertia (config InertiaMode). */
#define PAWL_INERTIA_OFF 0
#define PAWL_INERTIA_CARRY 1
#define PAWL_INERTIA_GLIDE 2

/* The engine's ScrollParams, as the settings map holds them (Rust twin:
 * pawl_bpf::ScrollParamsC, layout asserted by a test). 40 bytes. */
struct pawl_scroll_params {
	__u32 factor_q16;      /* EMA factor, Q16: 1 ..= 65536 */
	__u32 max_v120;        /* largest step per event, v120: a multiple of quantum_v120 */
	__u32 spike_ratio_q16; /* Q16, 0 = off */
	__u32 quantum_v120;    /* output quantum, v120: 1 ..= 120 */
	__u64 gesture_gap_us;  /* a pause longer than this starts a gesture, µs */
	__s64 carry_limit_q16; /* carry inertia's bank bound, Q16 v120 */
	__u8 invert_vertical;  /* 0 / 1 */
	__u8 invert_horizontal;
	__u8 inertia;          /* PAWL_INERTIA_* */
	__u8 pad[5];
};

/* One axis's state (the engine's ScrollAxis less the glide fields). All zero at rest.
 * Rust twin: pawl_bpf::ScrollAxisC. 56 bytes. */
struct pawl_scroll_axis {
	__u64 last;        /* µs of the last input event */
	__u64 burst_start; /* µs */
	__s64 ema;         /* Q16, >= 0 */
	__s64 carry;       /* Q16, 0 <= carry < quantum << 16 */
	__s64 burst_used;  /* Q16, <= max */
	__s64 bank;        /* Q16, |bank| <= carry_limit_q16 */
	__s32 lores;       /* v120 not yet a detent, |lores| < 120 */
	__s8 sign;         /* -1, 0, 1 */
	__s8 dir;
	__s8 out_sign;
	__u8 pad;
};

static __always_inline __s64 pawl_min64(__s64 a, __s64 b) { return a < b ? a : b; }
static __always_inline __s64 pawl_max64(__s64 a, __s64 b) { return a > b ? a : b; }
static __always_inline __u64 pawl_since(__u64 now, __u64 earlier)
{
	return now > earlier ? now - earlier : 0; /* saturating, as Micros::since */
}

/* `p` with output quantum `q` (1 ..= 120): ScrollParams::with_quantum, which also rounds
 * max_v120 down to a multiple of q (at least q). */
static __always_inline void pawl_scroll_with_quantum(struct pawl_scroll_params *p, __u32 q)
{
	if (q < 1)
		q = 1;
	if (q > PAWL_V120_PER_DETENT)
		q = PAWL_V120_PER_DETENT;
	p->quantum_v120 = q;
	p->max_v120 -= p->max_v120 % q;
	if (p->max_v120 < q)
		p->max_v120 = q;
}

/* Emit `m` (Q16, 0 <= m <= max) in direction a->dir as whole multiples of `quantum`;
 * returns the output v120, stores the lo-res detents in *detents. */
static __always_inline __s32 pawl_scroll_emit(struct pawl_scroll_axis *a, __u32 quantum, __s64 m,
					      __s32 *detents)
{
	__s64 total = m + a->carry;
	__s64 whole = total >> PAWL_FRAC_BITS; /* total >= 0: floor */
	__s32 out, d;
	__u32 mag;

	if (quantum > 1)
		whole -= (__s64)((__u64)whole % quantum);
	a->carry = total - (whole << PAWL_FRAC_BITS);
	out = a->dir < 0 ? -(__s32)whole : (__s32)whole;
	if (out != 0) {
		__s8 s = out > 0 ? 1 : -1;

		if (s != a->out_sign) {
			a->out_sign = s;
			a->lores = 0;
		}
	}
	a->lores += out;
	/* C's truncating division, done unsigned on the magnitude (no BPF sdiv). */
	mag = a->lores < 0 ? (__u32)0 - (__u32)a->lores : (__u32)a->lores;
	d = (__s32)(mag / PAWL_V120_PER_DETENT);
	if (a->lores < 0)
		d = -d;
	a->lores -= d * PAWL_V120_PER_DETENT;
	*detents = d;
	return out;
}

/* One input event of `v` v120 units at `now` µs; `invert` 0/1. Returns the output v120
 * (a multiple of the quantum), *detents the lo-res detents. The engine's ScrollAxis::step. */
static __always_inline __s32 pawl_scroll_step(struct pawl_scroll_axis *a,
					      const struct pawl_scroll_params *p, int invert,
					      __s32 v, __u64 now, __s32 *detents)
{
	__s8 sign, dir;
	__u32 mag;
	__s64 x, max, damped, room, stepped;
	__u64 dt;
	int reversed, new_gesture;

	*detents = 0;
	if (v == 0)
		return 0;
	/* 1. Direction, magnitude, gesture. */
	sign = v > 0 ? 1 : -1;
	dir = invert ? -sign : sign;
	mag = v > 0 ? (__u32)v : (__u32)0 - (__u32)v;
	if (mag > PAWL_V120_LIMIT)
		mag = PAWL_V120_LIMIT;
	x = (__s64)mag << PAWL_FRAC_BITS;
	dt = pawl_since(now, a->last);
	reversed = sign != a->sign || dir != a->dir;
	new_gesture = reversed || dt > p->gesture_gap_us;
	a->sign = sign;
	a->dir = dir;
	a->last = now;
	if (reversed) {
		a->carry = 0;
		a->bank = 0;
	}
	max = (__s64)p->max_v120 << PAWL_FRAC_BITS;
	/* 2. Spike damping. */
	damped = x;
	if (!new_gesture && p->spike_ratio_q16 != 0)
		damped = pawl_min64(x, ((__s64)p->spike_ratio_q16 * a->ema) >> PAWL_FRAC_BITS);
	/* 3. EMA, rounded to nearest. */
	if (new_gesture) {
		a->ema = damped;
	} else {
		__s64 f = p->factor_q16;

		a->ema = (f * damped + (PAWL_ONE - f) * a->ema + PAWL_HALF) >> PAWL_FRAC_BITS;
	}
	/* 4. Burst and clamp; carry inertia. */
	if (reversed || pawl_since(now, a->burst_start) >= PAWL_BURST_US) {
		a->burst_start = now;
		a->burst_used = 0;
	}
	room = pawl_max64(max - a->burst_used, 0);
	stepped = pawl_min64(a->ema, room);
	if (p->inertia == PAWL_INERTIA_CARRY) {
		__s64 bound = p->carry_limit_q16;
		__s64 bank = a->bank + (damped - stepped);

		bank = pawl_max64(pawl_min64(bank, bound), -bound);
		if (bank > 0) {
			__s64 release = pawl_min64(bank, room - stepped);

			stepped += release;
			bank -= release;
		}
		a->bank = bank;
	}
	a->burst_used += stepped;
	/* 5. Glide: user space's (see the top). 6. Emit. */
	return pawl_scroll_emit(a, p->quantum_v120, stepped, detents);
}

#endif /* PAWL_SCROLL_H */
