// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzzes the reader of a trace-cmd agent's v6 metadata (host/peer/tcmd_meta.c),
 * the bytes a stock `trace-cmd agent` sends in SEND_DATA: any input is
 * read into a tracemeta or refused, without reading past it; what is
 * accepted is a complete tracemeta (header_page present, the page size
 * set) whose texts lie within the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/tracemeta/tracemeta.h"
#include "host/peer/tcmd_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly @size bytes, so ASan sees any read past it */
	uint8_t *buf = malloc(size ? size : 1);
	struct tracemeta *tm = NULL;
	uint32_t cpus = 0;
	char err[300];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (!tcmd_meta_parse(buf, size, 4096, "local", &cpus, &tm, err, sizeof(err))) {
		const struct tracedat_meta *m = tracemeta_meta(tm);

		if (!m->header_page.len || m->page_size != 4096 ||
		    m->header_page.len + m->cmdlines.len > size)
			abort();
		tracemeta_free(tm);
	}
	free(buf);
	return 0;
}
