// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzzes what the host does with metadata parts a guest sends:
 * tracemeta_add_part() for every chunk, tracemeta_finish(), then the
 * trace.dat writer and the part iterator on the result.
 *
 * Input: records {u8 kind, u8 flags (bit 0: more), u8 system length
 * (low 4 bits), system bytes, u16 little-endian data length, data}, then
 * whatever is left is ignored. The page size comes from the first byte
 * (never 0, so libtraceevent's header parser is not what is fuzzed).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/tracemeta/tracemeta.h"
#include "common/tracedat/tracedat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Counts chunks; never fails. */
static int count_cb(void *ctx, unsigned int kind, const char *system,
		    const void *d, size_t len, bool more)
{
	(void)kind;
	(void)system;
	(void)d;
	(void)more;
	*(size_t *)ctx += len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1;
	struct tracemeta *tm;
	uint32_t page;
	size_t off = 1, total = 0;
	char sys[16];

	if (size < 1)
		return 0;
	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY);
	page = 1024u << (data[0] & 7);
	tm = tracemeta_new();
	if (!tm)
		return 0;
	while (off + 3 <= size) {
		unsigned int kind = data[off], more = data[off + 1] & 1;
		size_t sl = data[off + 2] & 15, len;

		off += 3;
		if (off + sl + 2 > size)
			break;
		memcpy(sys, data + off, sl);
		sys[sl] = '\0';
		off += sl;
		len = (size_t)data[off] | (size_t)data[off + 1] << 8;
		off += 2;
		if (len > size - off)
			len = size - off;
		if (tracemeta_add_part(tm, kind, sys, data + off, len, more))
			goto out;
		off += len;
	}
	if (tracemeta_finish(tm, page))
		goto out;
	{
		struct tracedat_cpu_data cpu = { .fd = -1, .buf = data,
						 .size = size };

		if (devnull >= 0)
			tracedat_write(devnull, tracemeta_meta(tm), NULL, &cpu, 1);
	}
	tracemeta_foreach_part(tm, 100, count_cb, &total);
out:
	tracemeta_free(tm);
	return 0;
}
