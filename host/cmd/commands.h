/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tsync-host subcommands; each returns the process exit code. */
#ifndef TSYNC_HOST_COMMANDS_H
#define TSYNC_HOST_COMMANDS_H

/* Exit codes: 0 ok, 1 failure during the run, 2 usage error. */
int host_cmd_sync(int argc, char **argv);
int host_cmd_record(int argc, char **argv);

#endif
