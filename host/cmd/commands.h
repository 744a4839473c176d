/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsync-host subcommands; each returns the process exit code.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): host/cmd/
 *   commands.h                    the subcommands
 *   sync_cmd.c                    tsync-host sync, one loop for every agent
 *   record_cmd.c                  tsync-host record
 *   record_args.c, record_args.h  record's command line
 *   rec_host.c, rec_host.h        record's host part: instance, streams, file
 *   rec_signals.c, rec_signals.h  record's signals, per phase
 *   status.c, status.h            the status line and summary legend
 *   status_live.c, status_live.h  the live status line's thread
 *   outfile.c, outfile.h          output file names as trace-cmd names them
 *   preflight.c, preflight.h      checks before connecting
 *   par.c, par.h                  one job per guest at once
 *   cpu_locks.c, cpu_locks.h      one lock per host CPU for sync rounds
 *   phases.c, phases.h            where a record's time goes (--verbose)
 *   json_out.c, json_out.h        the JSON writer (json-c) of sync and doctor
 *   doctor_cmd.c                  tsync-host doctor: options and output
 *   doctor.h, doctor_judge.c      the doctor's findings; the host's judged from facts (pure)
 *   doctor_host.c                 the host's facts, from this machine
 *   doctor_guest.c                a guest's checks, through peer, preflight and sync
 */
#ifndef TSYNC_HOST_COMMANDS_H
#define TSYNC_HOST_COMMANDS_H

/* Exit codes: 0 ok, 1 failure during the run, 2 usage error. */
int host_cmd_sync(int argc, char **argv);
int host_cmd_record(int argc, char **argv);
int host_cmd_doctor(int argc, char **argv);

#endif
