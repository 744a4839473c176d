// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzzes the per_cpu/cpuN/stats parser: any text is parsed or refused,
 * never read past its length (the input is not NUL-terminated).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/tracemeta/tracemeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tracemeta_stats st;

	tracemeta_parse_stats((const char *)data, size, &st);
	return 0;
}
