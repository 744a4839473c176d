// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-host: the host side of tsync. Subcommands: sync, record, doctor.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/
 *   main.c  tsync-host's subcommand dispatch
 *   cmd/    the sync, record and doctor commands
 *   guest/  one guest during a recording
 *   kvm/    KVM's per-vCPU TSC files (the kvm sync method)
 *   sync/   sync methods: how a guest's clock offset is learned
 *   peer/   the protocols' host side
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/base/version.h"
#include "host/cmd/commands.h"

/* Prints the top-level usage to @f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: tsync-host COMMAND [OPTIONS]\n"
"commands:\n"
"  sync     measure the offsets between host and guest trace clocks\n"
"  record   record host and guest traces into trace.dat files\n"
"  doctor   check the host and guests for what would stop a recording\n"
"  help     this text\n"
"run 'tsync-host COMMAND --help' for the options of a command,\n"
"'tsync-host --version' for the version\n");
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "sync"))
		return host_cmd_sync(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record"))
		return host_cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "doctor"))
		return host_cmd_doctor(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version")) {
		printf("tsync-host %s\n", TSYNC_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "tsync-host: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
