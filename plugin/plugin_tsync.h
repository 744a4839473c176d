/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugin_tsync.so: a libtraceevent plugin that prints tsync's own
 * trace_marker_raw records (proto/tsync_record.h) in words in
 * `trace-cmd report` and KernelShark. libtraceevent finds these symbols with
 * dlsym; they are declared here only so the sources build with
 * -Wmissing-prototypes.
 *
 * The folder's map (scripts/check-includes checks that it names every
 * file): plugin/
 *   plugin_tsync.c, plugin_tsync.h  the libtraceevent plugin printing tsync's records
 */
#ifndef TSYNC_PLUGIN_TSYNC_H
#define TSYNC_PLUGIN_TSYNC_H

#include <event-parse.h>

/* Registers the ftrace:raw_data print handler on @tep. Returns 0 or -1. */
int tep_plugin_loader(struct tep_handle *tep);
/* Unregisters what tep_plugin_loader() registered on @tep. Returns 0. */
int tep_plugin_unloader(struct tep_handle *tep);
/* Options, set with `trace-cmd report -O tsync:NAME=VALUE`. */
extern struct tep_plugin_option tep_plugin_options[];
/* The name options are addressed by ("tsync"). */
extern const char tep_plugin_alias[];

#endif
