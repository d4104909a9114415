/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The BPF program's scroll pipeline (scroll.h), compiled natively: what the equality tests
 * (tests/c_pipeline.rs) run against the engine. Nothing but an exported wrapper. */
#include <linux/types.h>

#include "scroll.h"

__s32 pawl_scroll_step_native(struct pawl_scroll_axis *a, const struct pawl_scroll_params *p,
			      int invert, __s32 v, __u64 now, __s32 *detents)
{
	return pawl_scroll_step(a, p, invert, v, now, detents);
}
