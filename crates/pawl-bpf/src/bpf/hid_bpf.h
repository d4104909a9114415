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

/* include/linux/hid.h */
enum hid_report_type {
	HID_INPUT_REPORT = 0,
	HID_OUTPUT_REPORT = 1,
	HID_FEATURE_REPORT = 2,
};

struct hid_device;

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

#endif /* PAWL_HID_BPF_H */
