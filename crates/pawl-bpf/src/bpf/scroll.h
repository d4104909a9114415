/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pawl's scroll pipeline for one wheel axis, in C, for the HID-BPF program and for the
 * native equality test (tests/c_pipeline.rs). It follows, step by step, the fixed-point
 * specification in crates/pawl-engine/src/scroll.rs ("Fixed-point specification"): every
 * value here is the Rust value of the same name, and the output is bit-identical to
 * `ScrollAxis::step` (proven on every recording and by a property test).
 *
 * Scope: all of it: spike damping, EMA, burst max-step clamp, carry inertia, glide
 * inertia (the speed estimate, the tail's arming and its ticks: `ScrollAxis::arm_glide`,
 * `tick`, `next_deadline`), inversion, the output quantum and the fractional carry, lo-res
 * detents. When a tick is due is the state's `deadline` (µs, valid while `has_deadline`);
 * running the tick at or after it is the caller's (the program: a BPF timer, pawl.bpf.c).
 *
 * Verifier-friendly: no loops, no floats, no signed division (BPF before cpu v4 has none:
 * the divisions here are unsigned: by the constant 120, by the quantum, and the glide's
 * speed estimate by the event spacing, at least PAWL_BURST_US so never zero), 64-bit
 * integer arithmetic, every function always inlined.
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
/* A glide stops when a tick would move less than this, Q16 v120: a tenth of a detent
 * (scroll.rs GLIDE_STOP_V120 = 12). */
#define PAWL_GLIDE_STOP (12LL << PAWL_FRAC_BITS)

/* ScrollParams::inertia (config InertiaMode). */
#define PAWL_INERTIA_OFF 0
#define PAWL_INERTIA_CARRY 1
#define PAWL_INERTIA_GLIDE 2

/* The engine's ScrollParams, as the settings map holds them (Rust twin:
 * pawl_bpf::ScrollParamsC, layout asserted by a test). 48 bytes. */
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
	__u8 pad;
	__u32 glide_decay_q16;   /* glide velocity kept per tick, Q16: 0 ..= 65535 */
	__u64 glide_interval_us; /* glide tick period, µs: 1 ..= 2^20 */
};

/* One axis's state: the engine's ScrollAxis, field for field (its Option<Micros>
 * deadline is `deadline` + `has_deadline`). All zero at rest.
 * Rust twin: pawl_bpf::ScrollAxisC. 80 bytes. */
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
	__u8 has_deadline; /* 1: a glide tick is due at `deadline` */
	__s64 speed;       /* glide speed estimate, Q16 v120 per tick, >= 0 */
	__s64 glide;       /* the tail's step, Q16 v120 per tick; 0 = not gliding */
	__u64 deadline;    /* µs of the next glide tick (has_deadline) */
};

static __always_inline __s64 pawl_min64(__s64 a, __s64 b) { return a < b ? a : b; }
static __always_inline __s64 pawl_max64(__s64 a, __s64 b) { return a > b ? a : b; }
static __always_inline __u64 pawl_since(__u64 now, __u64 earlier)
{
	return now > earlier ? now - earlier : 0; /* saturating, as Micros::since */
}
static __always_inline __u64 pawl_plus(__u64 t, __u64 us)
{
	return t + us < t ? ~0ULL : t + us; /* saturating, as Micros::plus */
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

/* Glide inertia after an event (the engine's ScrollAxis::arm_glide): the speed estimate
 * from the event's damped travel `moved` (Q16) over `dt` µs since the previous event, and
 * the tail armed when fast enough. `max` = max_v120 << 16. */
static __always_inline void pawl_scroll_arm_glide(struct pawl_scroll_axis *a,
						  const struct pawl_scroll_params *p, __s64 max,
						  __s64 moved, __u64 dt, int new_gesture)
{
	__u64 interval = p->glide_interval_us, wait;
	__s64 instant, per_tick;

	if (new_gesture) {
		a->speed = 0;
		a->glide = 0;
		return;
	}
	/* moved <= 2^39, interval <= 2^20: the product fits; the divisor is >= 2000. */
	instant = (__s64)(((__u64)moved * interval) / (dt > PAWL_BURST_US ? dt : PAWL_BURST_US));
	a->speed = a->speed == 0 ? instant : (a->speed + instant) >> 1;
	per_tick = pawl_min64(pawl_min64(instant, a->speed), max);
	if ((per_tick * (__s64)p->glide_decay_q16) >> PAWL_FRAC_BITS < PAWL_GLIDE_STOP) {
		a->glide = 0;
		return;
	}
	a->glide = per_tick;
	wait = dt > (~0ULL >> 1) ? ~0ULL : dt * 2;
	if (wait < interval)
		wait = interval;
	if (wait > p->gesture_gap_us)
		wait = p->gesture_gap_us;
	a->deadline = pawl_plus(a->last, wait);
	a->has_deadline = 1;
}

/* The glide tick due at or before `now` µs (the engine's ScrollAxis::tick): returns the
 * output v120 (0 when not gliding or not yet due), *detents the lo-res detents; leaves
 * `deadline` at the next tick, or clears `has_deadline` when the tail ends. */
static __always_inline __s32 pawl_scroll_tick(struct pawl_scroll_axis *a,
					      const struct pawl_scroll_params *p, __u64 now,
					      __s32 *detents)
{
	__s64 decay = p->glide_decay_q16, m;
	__u64 next;

	*detents = 0;
	if (!a->has_deadline || p->inertia != PAWL_INERTIA_GLIDE || now < a->deadline)
		return 0;
	a->glide = (a->glide * decay) >> PAWL_FRAC_BITS;
	m = a->glide;
	if ((m * decay) >> PAWL_FRAC_BITS < PAWL_GLIDE_STOP) {
		a->glide = 0;
		a->has_deadline = 0;
	} else {
		next = pawl_plus(a->deadline, p->glide_interval_us);
		a->deadline = next > now ? next : now;
	}
	return pawl_scroll_emit(a, p->quantum_v120, m, detents);
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
	a->has_deadline = 0;
	if (reversed) {
		a->carry = 0;
		a->bank = 0;
		a->glide = 0;
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
	/* 5. Glide speed estimate and tail. */
	if (p->inertia == PAWL_INERTIA_GLIDE)
		pawl_scroll_arm_glide(a, p, max, damped, dt, new_gesture);
	/* 6. Emit. */
	return pawl_scroll_emit(a, p->quantum_v120, stepped, detents);
}

#endif /* PAWL_SCROLL_H */
