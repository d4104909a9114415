/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Just the kernel types pawl's HID-BPF program needs, checked in, so that building needs no
 * kernel and no generated vmlinux.h. As drivers/hid/bpf/progs/hid_bpf.h does, the kernel
 * structs are declared with CO-RE (`preserve_access_index`): libbpf relocates every field
 * access against the running kernel's BTF at load, and matches struct_ops members by name,
 * so these need only the members used here. Kernel API: struct hid_bpf_ops (6.11).
 */
#ifndef PAWL_HID_BPF_H
#define PAWL_HID_BPF_H

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef signed short __s16;
typedef unsigned int __u32;
typedef signed int __s32;
typedef unsigned long long __u64;
typedef signed long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
typedef __u64 size_t;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)

/* include/uapi/linux/bpf.h: the map types and flags used here (stable UAPI values). */
enum bpf_map_type {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_RINGBUF = 27,
};
#define BPF_F_RDONLY_PROG (1U << 7)
/* bpf_timer_start flags: the expiry is absolute CLOCK_MONOTONIC ns (6.7). */
#define BPF_F_TIMER_ABS (1ULL << 0)
/* include/uapi/linux/time.h */
#define CLOCK_MONOTONIC 1

/* include/uapi/linux/bpf.h: opaque kernel objects a map value may hold (the verifier finds
 * them by their BTF name). bpf_timer: 5.15; bpf_wq: 6.10. */
struct bpf_timer {
	__u64 __opaque[2];
} __attribute__((aligned(8)));
struct bpf_wq {
	__u64 __opaque[2];
} __attribute__((aligned(8)));

/* include/linux/hid.h */
enum hid_report_type {
	HID_INPUT_REPORT = 0,
	HID_OUTPUT_REPORT = 1,
	HID_FEATURE_REPORT = 2,
};

/* include/linux/hid.h: only the system-unique id (what hid_bpf_allocate_context takes). */
struct hid_device {
	unsigned int id;
} __attribute__((preserve_access_index));

/* include/linux/hid_bpf.h: the context every HID-BPF program gets. */
struct hid_bpf_ctx {
	struct hid_device *hid;
	__u32 allocated_size;
	union {
		__s32 retval;
		__s32 size;
	};
} __attribute__((preserve_access_index));

/* include/linux/hid_bpf.h: the struct_ops (6.11). Members matched by name. */
struct hid_bpf_ops {
	int hid_id;
	__u32 flags;
	int (*hid_device_event)(struct hid_bpf_ctx *ctx, enum hid_report_type report_type,
				__u64 source);
} __attribute__((preserve_access_index));

/* drivers/hid/bpf/hid_bpf_dispatch.c: a pointer to the report's first `sz` bytes (a
 * constant), NULL when the buffer is smaller. */
extern __u8 *hid_bpf_get_data(struct hid_bpf_ctx *ctx, unsigned int offset, const size_t sz)
	__attribute__((section(".ksyms")));

/* drivers/hid/bpf/hid_bpf_dispatch.c (6.11), sleepable only: a context for the HID device
 * `hid_id` (NULL when it is gone), its release, and a report injected as if the device had
 * sent it (through the HID-BPF programs again, with `source` = the context, then the
 * driver). */
extern struct hid_bpf_ctx *hid_bpf_allocate_context(unsigned int hid_id)
	__attribute__((section(".ksyms")));
extern void hid_bpf_release_context(struct hid_bpf_ctx *ctx) __attribute__((section(".ksyms")));
extern int hid_bpf_input_report(struct hid_bpf_ctx *ctx, enum hid_report_type type, __u8 *buf,
				const size_t buf__sz) __attribute__((section(".ksyms")));

/* kernel/bpf/helpers.c: bpf_wq (6.10), a work item whose callback may sleep. The callback
 * setter is bpf_wq_set_callback_impl up to the kernels that grew implicit kfunc arguments,
 * bpf_wq_set_callback after (7.3 has both): both weak, the program takes the one there is. */
extern int bpf_wq_init(struct bpf_wq *wq, void *p__map, unsigned int flags)
	__attribute__((section(".ksyms")));
extern int bpf_wq_start(struct bpf_wq *wq, unsigned int flags) __attribute__((section(".ksyms")));
extern int bpf_wq_set_callback_impl(struct bpf_wq *wq,
				    int (*callback_fn)(void *map, int *key, void *value),
				    unsigned int flags__k, void *aux__ign)
	__attribute__((weak, section(".ksyms")));
extern int bpf_wq_set_callback(struct bpf_wq *wq,
			       int (*callback_fn)(void *map, int *key, void *value),
			       unsigned int flags) __attribute__((weak, section(".ksyms")));

#endif /* PAWL_HID_BPF_H */
