// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace-cmd's kvm time sync on the wire (proto/tcmd.h): the REQUEST the
 * guest sends with its marker's timestamp and the RESPONSE the host
 * answers with KVM's offset and scaling. Both are trace-cmd's struct
 * kvm_clock_offset_msg as it lies in memory (four int64, native order),
 * so a peer of the other byte order cannot take part: trace-cmd has the
 * same limit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/tcmd.h"

/* What a message may carry: a ts not before 0; a RESPONSE's scaling 1 or
 * more and frac 0..63. */
static const char *kvm_check(uint32_t id, const struct tcmd_kvm_msg *k)
{
	if (id != TCMD_KVM_REQUEST && id != TCMD_KVM_RESPONSE)
		return "unknown message";
	if (k->ts < 0)
		return "negative timestamp";
	if (id == TCMD_KVM_RESPONSE && k->scaling < 1)
		return "scaling below 1";
	if (id == TCMD_KVM_RESPONSE && (k->frac < 0 || k->frac > 63))
		return "fraction bits outside 0..63";
	return NULL;
}

/* kvm REQUEST / RESPONSE; see tcmd.h. */
ssize_t tcmd_enc_kvm(uint8_t *buf, size_t cap, uint32_t id, const struct tcmd_kvm_msg *k)
{
	int64_t v[4] = { k->ts, k->offset, k->scaling, k->frac };

	if (kvm_check(id, k))
		return -EINVAL;
	return tcmd_enc_time_sync(buf, cap, TCMD_PROTO_KVM, id, v, sizeof(v));
}

/* Checks a kvm TIME_SYNC's payload; see tcmd.h. */
int tcmd_dec_kvm(struct tcmd_time_sync *t, struct tcmd_err *e)
{
	int64_t v[4];
	const char *why;

	if (t->len != TCMD_KVM_MSG_LEN) {
		if (e)
			snprintf(e->reason, sizeof(e->reason), "TIME_SYNC kvm %u: payload is %u "
				 "bytes, expected %u", t->id, t->len, TCMD_KVM_MSG_LEN);
		return -EBADMSG;
	}
	memcpy(v, t->payload, sizeof(v));
	t->kvm = (struct tcmd_kvm_msg){ .ts = v[0], .offset = v[1], .scaling = v[2],
					.frac = v[3] };
	why = kvm_check(t->id, &t->kvm);
	if (why) {
		if (e)
			snprintf(e->reason, sizeof(e->reason), "TIME_SYNC kvm %u: %s", t->id,
				 why);
		return -EBADMSG;
	}
	return 0;
}
