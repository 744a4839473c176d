// SPDX-License-Identifier: GPL-2.0-or-later
/* `tsync-host record` (placeholder until record lands). */
#include <stdio.h>

#include "host/commands.h"

/* Not implemented yet: says so and fails. */
int host_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "tsync-host record: not implemented yet\n");
	return 1;
}
