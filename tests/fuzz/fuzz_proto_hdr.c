// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: tsync_hdr_decode() on arbitrary bytes. A header it
 * accepts must satisfy every rule the rest of the code relies on (magic,
 * spoken version, known type, length within the type's limits and
 * TSYNC_MSG_MAX); a rejection must carry its code and a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Checks one input; aborts on a broken invariant. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tsync_proto_err e;
	struct tsync_hdr h;
	uint8_t *copy = malloc(size ? size : 1);
	int ret;

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);	/* exact size: ASan sees over-reads */
	ret = tsync_hdr_decode(copy, size, &h, &e);
	if (ret) {
		if (!tsync_perr_is_proto(ret) || e.code != ret || !e.reason[0])
			abort();
	} else if (size < TSYNC_HDR_LEN || h.magic != TSYNC_MAGIC ||
		   h.version < TSYNC_PROTO_VERSION_MIN ||
		   h.version > TSYNC_PROTO_VERSION_MAX ||
		   !tsync_msg_type_known(h.type) ||
		   h.len < tsync_msg_min_len(h.type) ||
		   h.len > tsync_msg_max_len(h.type) || h.len > TSYNC_MSG_MAX) {
		abort();
	}
	free(copy);
	return 0;
}
