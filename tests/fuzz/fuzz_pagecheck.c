// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzzes the guest page check (host/guest/pagecheck.c). Byte 0 picks the layout
 * (bit 0: 1 KiB or 4 KiB pages; bit 1: a 32-bit guest's 4-byte commit
 * field); the rest is the page. Any page is accepted or refused without
 * reading past it, and every page accepted is then read by libtraceevent's
 * kbuffer, as trace-cmd reads a trace.dat: each event it finds must lie
 * inside the page and the timestamps must not go back. A page that passes
 * the check but breaks these aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <kbuffer.h>

#include "host/guest/pagecheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every event of @page with kbuffer; aborts on a broken promise. */
static void read_back(uint8_t *page, const struct page_format *f)
{
	struct kbuffer *kb = kbuffer_alloc(f->commit_size == 4 ? KBUFFER_LSIZE_4 : KBUFFER_LSIZE_8,
					   KBUFFER_ENDIAN_SAME_AS_HOST);
	unsigned long long ts, last = 0;
	unsigned int n = 0;
	void *ev;

	if (!kb)
		return;
	if (kbuffer_load_subbuffer(kb, page) < 0)
		abort();
	for (ev = kbuffer_read_event(kb, &ts); ev; ev = kbuffer_next_event(kb, &ts)) {
		int len = kbuffer_event_size(kb);

		if ((uint8_t *)ev < page || len < 0 ||
		    (uint8_t *)ev + len > page + f->page_size || ts < last ||
		    ++n > f->page_size / 4)
			abort();
		last = ts;
	}
	kbuffer_free(kb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char hp32[] = "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n";
	struct page_format f;
	char why[200];
	uint8_t *page;

	if (size < 1)
		return 0;
	if (page_format_init(&f, data[0] & 1 ? 1024 : 4096, data[0] & 2 ? hp32 : NULL,
			     data[0] & 2 ? sizeof(hp32) - 1 : 0))
		abort();
	page = calloc(1, f.page_size);
	if (!page)
		return 0;
	memcpy(page, data + 1, size - 1 < f.page_size ? size - 1 : f.page_size);
	if (!page_check(page, &f, why, sizeof(why)))
		read_back(page, &f);
	free(page);
	return 0;
}
